//! The star stencils of order `R` beyond the seven-point one (the chapter's notes: 13 points for
//! order 2, 25 for order 4), as high-order finite differences use them: the centre and, on each
//! axis, the points at distances `1..=R` on both sides, one coefficient per axis and distance (so
//! anisotropic grid spacings work). The seven-point stencil, with its seven independent
//! coefficients, stays [`Coeffs`](super::Coeffs).
//!
//! The point formula is shared by the CPU reference and the GPU, as `Coeffs::apply` is.

use crate::Real;

/// Coefficients of the order-`R` star (`6R + 1` points): the centre's, and per axis one for the
/// two points at each distance `d` (`x[d − 1]`, …). Passed to kernels by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StarCoeffs<T, const R: usize> {
    pub center: T,
    pub x: [T; R],
    pub y: [T; R],
    pub z: [T; R],
}

/// The points at distances `1..=R` on both sides of a point along one axis: `minus[d − 1]` at
/// `−d`, `plus[d − 1]` at `+d`.
#[derive(Clone, Copy, Debug)]
pub struct Arm<T, const R: usize> {
    pub minus: [T; R],
    pub plus: [T; R],
}

impl<T: Real, const R: usize> StarCoeffs<T, R> {
    /// The formula for one interior point, in this order: the centre's product; then for x, y
    /// and z, and for `d = 1..=R`, the two points at distance `d` added and their sum weighed in
    /// with a fused multiply-add (`c · (u₋ + u₊) + sum`, rounded once).
    #[inline(always)]
    pub fn apply(self, center: T, x: Arm<T, R>, y: Arm<T, R>, z: Arm<T, R>) -> T {
        let sum = self.center * center;
        let sum = weigh(sum, self.x, x);
        let sum = weigh(sum, self.y, y);
        weigh(sum, self.z, z)
    }
}

/// `sum` plus one axis's points of coefficients `c`, nearest first: [`apply`](StarCoeffs::apply)'s
/// step for one axis, for kernels that take the formula's steps apart (in this order).
#[inline(always)]
pub fn weigh<T: Real, const R: usize>(mut sum: T, c: [T; R], arm: Arm<T, R>) -> T {
    for d in 0..R {
        sum = weigh_pair(sum, c[d], arm.minus[d], arm.plus[d]);
    }
    sum
}

/// `sum` plus the two points `minus` and `plus` at one distance, of coefficient `c`: added, and
/// their sum weighed in with one fused multiply-add (`c · (minus + plus) + sum`, rounded once).
#[inline(always)]
pub fn weigh_pair<T: Real>(sum: T, c: T, minus: T, plus: T) -> T {
    c.mul_add(minus + plus, sum)
}

/// The standard central-difference weights of the second derivative whose error is of order
/// `2R` (Fornberg, "Generation of finite difference formulas on arbitrarily spaced grids",
/// 1988): the centre's weight and those at distances `1..=R`, for unit spacing. Orders 1, 2 and 4
/// (the 7-, 13- and 25-point Laplacians); `None` for others.
pub fn second_derivative_weights(order: usize) -> Option<(f64, &'static [f64])> {
    match order {
        1 => Some((-2.0, &[1.0])),
        2 => Some((-5.0 / 2.0, &[4.0 / 3.0, -1.0 / 12.0])),
        4 => Some((-205.0 / 72.0, &[8.0 / 5.0, -1.0 / 5.0, 8.0 / 315.0, -1.0 / 560.0])),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm<const R: usize>(f: impl Fn(i32) -> f64) -> Arm<f64, R> {
        Arm {
            minus: core::array::from_fn(|d| f(-(d as i32 + 1))),
            plus: core::array::from_fn(|d| f(d as i32 + 1)),
        }
    }

    /// The Laplacian of order `R` at `(0, 0, 0)` of a function of the offsets.
    fn laplacian<const R: usize>(order: usize, f: impl Fn(i32, i32, i32) -> f64) -> f64 {
        let (centre, weights) = second_derivative_weights(order).unwrap();
        let w: [f64; R] = weights.try_into().unwrap();
        let c = StarCoeffs { center: 3.0 * centre, x: w, y: w, z: w };
        c.apply(f(0, 0, 0), arm(|d| f(d, 0, 0)), arm(|d| f(0, d, 0)), arm(|d| f(0, 0, d)))
    }

    #[test]
    fn high_order_laplacians_are_exact_on_polynomials_they_should_be() {
        // ∇²(x² + 2y² + 3z²) = 12 for every order; order 4 is also exact on degree-8 terms'
        // second derivatives up to its order: ∇²(x⁴) = 12x² = 0 at the origin.
        let quadratic = |x: i32, y: i32, z: i32| f64::from(x * x + 2 * y * y + 3 * z * z);
        assert!((laplacian::<1>(1, quadratic) - 12.0).abs() < 1e-12);
        assert!((laplacian::<2>(2, quadratic) - 12.0).abs() < 1e-12);
        assert!((laplacian::<4>(4, quadratic) - 12.0).abs() < 1e-12);
        let quartic = |x: i32, _: i32, _: i32| f64::from(x).powi(4);
        assert!(laplacian::<2>(2, quartic).abs() < 1e-12);
        assert!(laplacian::<4>(4, quartic).abs() < 1e-12);
        // The 7-point Laplacian is not: it sees 2 where ∇²(x⁴) = 0.
        assert!((laplacian::<1>(1, quartic) - 2.0).abs() < 1e-12);
        let sextic = |x: i32, _: i32, _: i32| f64::from(x).powi(6);
        assert!(laplacian::<4>(4, sextic).abs() < 1e-9);
    }

    #[test]
    fn weights_sum_to_zero_and_only_built_orders_have_them() {
        for order in [1, 2, 4] {
            let (centre, w) = second_derivative_weights(order).unwrap();
            assert_eq!(w.len(), order);
            assert!((centre + 2.0 * w.iter().sum::<f64>()).abs() < 1e-15, "order {order}");
        }
        assert!(second_derivative_weights(3).is_none());
    }

    #[test]
    fn the_formula_adds_pairs_then_weighs_them_in_order() {
        let c = StarCoeffs { center: 2.0f32, x: [3.0, 5.0], y: [7.0, 11.0], z: [13.0, 17.0] };
        let a = |m: [f32; 2], p: [f32; 2]| Arm { minus: m, plus: p };
        let v = c.apply(1.0, a([1.0, 0.0], [1.0, 0.0]), a([0.0, 1.0], [0.0, 0.0]), a([0.0, 0.0], [0.0, 2.0]));
        assert_eq!(v, 2.0 + 3.0 * 2.0 + 11.0 + 17.0 * 2.0);
    }
}
