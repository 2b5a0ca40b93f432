//! Fresh random inputs (never zeros), reproducible from a seed.

use ndarray::Array3;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

use crate::{Element, Error, Result};

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
    let mut rng = SmallRng::seed_from_u64(seed);
    values.extend((0..len).map(|_| T::from_f64(rng.random_range(-1.0..1.0))));
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
    fn impossible_sizes_are_an_error_not_an_abort() {
        let err = random_grid::<f64>((usize::MAX / 2, 4, 1), 1).unwrap_err();
        assert!(matches!(err, Error::OutOfMemory(_)), "{err}");
    }
}
