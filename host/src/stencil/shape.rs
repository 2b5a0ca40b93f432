//! Grid shapes: parsing `N` or `NZxNYxNX`, and the limits the kernels accept.

use gpu_kernels::stencil::Grid3;

use crate::{Error, Result};

/// Smallest extent along any axis: one interior point between two boundary points.
pub const MIN_DIM: usize = 3;
/// Largest extent along any axis: coordinates are `i32` in the kernels, with room for
/// the halo of a tile that starts one point before the grid.
pub const MAX_DIM: usize = (i32::MAX as usize) - 1024;

/// The grid `nz × ny × nx`, if every extent is in `MIN_DIM..=MAX_DIM`.
pub fn grid_of(nz: usize, ny: usize, nx: usize) -> Result<Grid3> {
    for (axis, n) in [("nz", nz), ("ny", ny), ("nx", nx)] {
        if !(MIN_DIM..=MAX_DIM).contains(&n) {
            return Err(Error::BadShape(format!(
                "{axis} = {n}, but every extent must be between {MIN_DIM} and {MAX_DIM} (grids are nz×ny×nx, x fastest)"
            )));
        }
    }
    Ok(Grid3 { nx: nx as u32, ny: ny as u32, nz: nz as u32 })
}

/// Parses `N` (a cube) or `NZxNYxNX` (x fastest in memory).
pub fn parse_grid(text: &str) -> Result<Grid3> {
    let parts: Vec<&str> = text.split(['x', 'X', '×']).collect();
    let parse = |part: &str| {
        part.trim().parse::<usize>().map_err(|_| {
            Error::BadShape(format!("`{text}` is not a grid: expected N or NZxNYxNX with positive integers, e.g. 512 or 256x512x1024"))
        })
    };
    match parts.as_slice() {
        [n] => {
            let n = parse(n)?;
            grid_of(n, n, n)
        }
        [nz, ny, nx] => grid_of(parse(nz)?, parse(ny)?, parse(nx)?),
        _ => Err(Error::BadShape(format!(
            "`{text}` is not a grid: expected N or NZxNYxNX, e.g. 512 or 256x512x1024"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cube_and_three_extents() {
        assert_eq!(parse_grid("512").unwrap(), Grid3 { nx: 512, ny: 512, nz: 512 });
        assert_eq!(parse_grid("5x7x1000").unwrap(), Grid3 { nx: 1000, ny: 7, nz: 5 });
        assert_eq!(parse_grid(" 3 X 4 X 5 ").unwrap(), Grid3 { nx: 5, ny: 4, nz: 3 });
    }

    #[test]
    fn malformed_grids_are_bad_shapes() {
        for text in ["", "x", "12x", "1x2", "3x3x3x3", "-5", "abc", "3.5", "4x4xq"] {
            let err = parse_grid(text).unwrap_err();
            assert!(matches!(err, Error::BadShape(_)), "{text}: {err}");
        }
    }

    #[test]
    fn extents_below_three_or_too_large_are_refused() {
        for (nz, ny, nx) in [(2, 3, 3), (3, 0, 3), (3, 3, 1), (3, 3, MAX_DIM + 1)] {
            let err = grid_of(nz, ny, nx).unwrap_err().to_string();
            assert!(err.contains("between 3 and"), "{err}");
        }
        assert!(grid_of(3, 3, 3).is_ok());
    }
}
