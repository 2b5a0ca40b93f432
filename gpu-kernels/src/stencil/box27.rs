//! The 27-point box stencil: a point and all 26 neighbours of its 3×3×3 cube, weighed by distance
//! class (the centre, the 6 faces, the 12 edges, the 8 corners), as smoothing and some
//! compact high-order schemes use it.
//!
//! The point formula is shared by the CPU reference and the GPU, as `Coeffs::apply` is: each of
//! the cube's three planes reduced to its weighted terms ([`PlaneTerms`]), summed from the plane
//! below to the plane above ([`BoxCoeffs::open`], then [`BoxCoeffs::close`]).

use crate::Real;

/// Coefficients of the box stencil by distance class. Passed to kernels by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoxCoeffs<T> {
    pub center: T,
    pub face: T,
    pub edge: T,
    pub corner: T,
}

/// The 3×3×3 values around a point, `[dz][dy][dx]` with offsets `0..3` (`[1][1][1]` the point).
pub type Cube<T> = [[[T; 3]; 3]; 3];

/// One 3×3 plane of a cube, `[dy][dx]`.
pub type Plane<T> = [[T; 3]; 3];

/// What the formula needs of one plane of the cube, as the two weighted sums it enters a point's
/// value with: `here`, the plane's own terms for the point at its centre (centre × `center`, the
/// 4 points beside it × `face`, the 4 diagonal ones × `edge`), and `side`, its terms for the
/// points above and below it (centre × `face`, beside × `edge`, diagonal × `corner`). A streaming
/// kernel computes them once per plane, as soon as the plane is loaded, instead of keeping the
/// plane's nine values a point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlaneTerms<T> {
    pub here: T,
    pub side: T,
}

impl<T: Real> PlaneTerms<T> {
    /// The terms of `plane` under `c`: its centre, the sum of the 4 points beside the centre
    /// (the middle row's two ends, then the middle column's) and of the 4 diagonal ones (the
    /// top row's two corners, then the bottom row's), each weighed in with a fused
    /// multiply-add after the centre's product.
    #[inline(always)]
    pub fn of(plane: &Plane<T>, c: BoxCoeffs<T>) -> Self {
        let centre = plane[1][1];
        let beside = (plane[1][0] + plane[1][2]) + (plane[0][1] + plane[2][1]);
        let diagonal = (plane[0][0] + plane[0][2]) + (plane[2][0] + plane[2][2]);
        let weigh = |[a, b, d]: [T; 3]| d.mul_add(diagonal, b.mul_add(beside, a * centre));
        Self { here: weigh([c.center, c.face, c.edge]), side: weigh([c.face, c.edge, c.corner]) }
    }
}

impl<T: Real> BoxCoeffs<T> {
    /// The formula's first sum for a point: the plane below's `side` term plus the point's own
    /// plane's `here`. A streaming kernel forms it as soon as the point's plane is reduced, and
    /// then keeps one value for the point instead of two planes' terms.
    #[inline(always)]
    pub fn open(below_side: T, here: PlaneTerms<T>) -> T {
        below_side + here.here
    }

    /// The formula's last sum: the point's [`open`](Self::open) sum plus the plane above's
    /// `side` term.
    #[inline(always)]
    pub fn close(open: T, above: PlaneTerms<T>) -> T {
        open + above.side
    }

    /// The formula for one interior point from its cube: its planes' [`PlaneTerms`], summed
    /// from the plane below up ([`open`](Self::open), then [`close`](Self::close)).
    #[inline(always)]
    pub fn apply(self, cube: &Cube<T>) -> T {
        let [below, here, above] = cube.each_ref().map(|plane| PlaneTerms::of(plane, self));
        Self::close(Self::open(below.side, here), above)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cube(f: impl Fn(usize, usize, usize) -> f64) -> Cube<f64> {
        core::array::from_fn(|z| core::array::from_fn(|y| core::array::from_fn(|x| f(z, y, x))))
    }

    #[test]
    fn each_class_gets_its_coefficient() {
        let c = BoxCoeffs { center: 1000.0, face: 100.0, edge: 10.0, corner: 1.0 };
        assert_eq!(c.apply(&cube(|_, _, _| 1.0)), 1000.0 + 6.0 * 100.0 + 12.0 * 10.0 + 8.0);
        // Only the corner (0, 0, 0) set: the corner coefficient alone.
        assert_eq!(c.apply(&cube(|z, y, x| if z + y + x == 0 { 1.0 } else { 0.0 })), 1.0);
        // Only an edge: (1, 0, 0) is off-centre in y and x.
        assert_eq!(c.apply(&cube(|z, y, x| if (z, y, x) == (1, 0, 0) { 1.0 } else { 0.0 })), 10.0);
    }

    #[test]
    fn every_member_of_a_class_gets_its_coefficient() {
        let c = BoxCoeffs { center: 1000.0, face: 100.0, edge: 10.0, corner: 1.0 };
        for (z, y, x) in (0..27).map(|i| (i / 9, i / 3 % 3, i % 3)) {
            let away = [z, y, x].iter().filter(|&&o| o != 1).count();
            let expected = [1000.0, 100.0, 10.0, 1.0][away];
            let one = cube(|a, b, d| if (a, b, d) == (z, y, x) { 1.0 } else { 0.0 });
            assert_eq!(c.apply(&one), expected, "member ({z}, {y}, {x})");
        }
    }

    #[test]
    fn the_normalised_average_keeps_a_constant() {
        let w = 1.0 / 27.0;
        let c = BoxCoeffs { center: w, face: w, edge: w, corner: w };
        assert!((c.apply(&cube(|_, _, _| 3.5)) - 3.5).abs() < 1e-14);
    }
}
