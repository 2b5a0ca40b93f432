//! Fresh random inputs (never zeros), reproducible from a seed.

use ndarray::Array3;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;

use crate::{Element, Error, Result};

/// Elements per generator when a grid is filled in parallel.
const CHUNK: usize = 1 << 20;

/// A new seed from the operating system's generator.
pub fn fresh_seed() -> u64 {
    rand::rng().random()
}

/// A `(nz, ny, nx)` grid of values uniform in `[-1, 1)`, from `seed`. Fails with
/// [`Error::OutOfMemory`] instead of aborting when the host cannot hold it.
pub fn random_grid<T: Element>(shape: (usize, usize, usize), seed: u64) -> Result<Array3<T>> {
    let len = shape.0.checked_mul(shape.1).and_then(|n| n.checked_mul(shape.2));
    let len = len
        .ok_or_else(|| Error::OutOfMemory(format!("a {shape:?} grid has more points than fit in memory")))?;
    let mut values = Vec::new();
    values.try_reserve_exact(len).map_err(|_| {
        Error::OutOfMemory(format!("the host cannot hold {len} elements of {} for the input grid", T::NAME))
    })?;
    // Chunks of the grid are filled in parallel, each from its own generator seeded by `seed`
    // and the chunk's index, so the grid depends on the seed alone, not on the thread count.
    values.resize(len, T::from_f64(0.0));
    values.par_chunks_mut(CHUNK).enumerate().for_each(|(chunk, values)| {
        let mut rng = SmallRng::seed_from_u64(seed ^ (chunk as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        values.iter_mut().for_each(|v| *v = T::from_f64(rng.random_range(-1.0..1.0)));
    });
    Ok(Array3::from_shape_vec(shape, values).expect("length matches the shape"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_grid_and_values_in_range() {
        let a = random_grid::<f32>((3, 4, 5), 7).unwrap();
        assert_eq!(a, random_grid::<f32>((3, 4, 5), 7).unwrap());
        assert_ne!(a, random_grid::<f32>((3, 4, 5), 8).unwrap());
        assert!(a.iter().all(|v| (-1.0..1.0).contains(v) && *v != 0.0));
    }

    #[test]
    fn grids_larger_than_a_chunk_depend_on_the_seed_alone() {
        let shape = (3, 1000, 1000);
        let a = random_grid::<f32>(shape, 11).unwrap();
        assert_eq!(a, random_grid::<f32>(shape, 11).unwrap());
        // Chunks draw different values: the second chunk does not repeat the first.
        let flat = a.as_slice().unwrap();
        assert_ne!(flat[..1000], flat[CHUNK..CHUNK + 1000]);
    }

    #[test]
    fn impossible_sizes_are_an_error_not_an_abort() {
        let err = random_grid::<f64>((usize::MAX / 2, 4, 1), 1).unwrap_err();
        assert!(matches!(err, Error::OutOfMemory(_)), "{err}");
    }
}
