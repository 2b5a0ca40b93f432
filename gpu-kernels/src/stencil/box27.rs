//! The 27-point box stencil: a point and all 26 neighbours of its 3×3×3 cube, weighed by distance
//! class (the centre, the 6 faces, the 12 edges, the 8 corners), as smoothing and some
//! compact high-order schemes use it.
//!
//! The point formula is shared by the CPU reference and the GPU, as `Coeffs::apply` is.

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

/// What the formula needs of one plane of the cube: its centre, the sum of the 4 points beside
/// the centre (`cross`) and the sum of the 4 diagonal ones (`diagonal`). A streaming kernel
/// computes them once per plane and keeps them for the three points whose cubes hold the plane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlaneSums<T> {
    pub centre: T,
    pub cross: T,
    pub diagonal: T,
}

impl<T: Real> PlaneSums<T> {
    /// The sums of `plane`, in this order: the middle row's two ends, then the middle column's;
    /// the top row's two corners, then the bottom row's.
    #[inline(always)]
    pub fn of(plane: &Plane<T>) -> Self {
        let middle_row = plane[1][0] + plane[1][2];
        Self {
            centre: plane[1][1],
            cross: middle_row + (plane[0][1] + plane[2][1]),
            diagonal: (plane[0][0] + plane[0][2]) + (plane[2][0] + plane[2][2]),
        }
    }
}

impl<T: Real> BoxCoeffs<T> {
    /// The formula for one interior point from the sums of its cube's planes below, here and
    /// above: the faces are here's cross and the centres below and above; the edges here's
    /// diagonal and the crosses below and above; the corners the diagonals below and above. The
    /// centre's product first, then the faces', edges' and corners' sums weighed in with fused
    /// multiply-adds.
    #[inline(always)]
    pub fn apply_sums(self, below: PlaneSums<T>, here: PlaneSums<T>, above: PlaneSums<T>) -> T {
        let faces = here.cross + (below.centre + above.centre);
        let edges = here.diagonal + (below.cross + above.cross);
        let corners = below.diagonal + above.diagonal;
        let sum = self.center * here.centre;
        let sum = self.face.mul_add(faces, sum);
        let sum = self.edge.mul_add(edges, sum);
        self.corner.mul_add(corners, sum)
    }

    /// The formula for one interior point from its cube ([`apply_sums`](Self::apply_sums) of
    /// its planes' [`PlaneSums`]).
    #[inline(always)]
    pub fn apply(self, cube: &Cube<T>) -> T {
        let [below, here, above] = cube.each_ref().map(PlaneSums::of);
        self.apply_sums(below, here, above)
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
