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

/// The offsets `[dz, dy, dx]` of the cube's members `off` steps from the centre (1: faces, 2:
/// edges, 3: corners), in `z`, `y`, `x` order (x fastest).
const fn class<const N: usize>(off: usize) -> [[usize; 3]; N] {
    let mut offsets = [[0; 3]; N];
    let (mut n, mut i) = (0, 0);
    while i < 27 {
        let at = [i / 9, i / 3 % 3, i % 3];
        let away = (at[0] != 1) as usize + (at[1] != 1) as usize + (at[2] != 1) as usize;
        if away == off {
            offsets[n] = at;
            n += 1;
        }
        i += 1;
    }
    assert!(n == N, "a class of the cube has 6, 12 or 8 members");
    offsets
}

/// The faces', edges' and corners' offsets.
const FACES: [[usize; 3]; 6] = class(1);
const EDGES: [[usize; 3]; 12] = class(2);
const CORNERS: [[usize; 3]; 8] = class(3);

/// The sum of one class's values, in the order of `offsets`.
#[inline(always)]
fn class_sum<T: Real, const N: usize>(cube: &Cube<T>, offsets: &[[usize; 3]; N]) -> T {
    let at = |[z, y, x]: [usize; 3]| cube[z][y][x];
    let mut sum = at(offsets[0]);
    for &offset in &offsets[1..] {
        sum = sum + at(offset);
    }
    sum
}

impl<T: Real> BoxCoeffs<T> {
    /// The formula for one interior point, in this order: each class's values summed in `z`,
    /// `y`, `x` order (x fastest); then the centre's product, and the faces', edges' and
    /// corners' sums weighed in with fused multiply-adds.
    #[inline(always)]
    pub fn apply(self, cube: &Cube<T>) -> T {
        let sum = self.center * cube[1][1][1];
        let sum = self.face.mul_add(class_sum(cube, &FACES), sum);
        let sum = self.edge.mul_add(class_sum(cube, &EDGES), sum);
        self.corner.mul_add(class_sum(cube, &CORNERS), sum)
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
    fn classes_partition_the_cube() {
        let mut seen = [[[0; 3]; 3]; 3];
        for [z, y, x] in FACES.iter().chain(&EDGES).chain(&CORNERS).copied() {
            seen[z][y][x] += 1;
        }
        seen[1][1][1] += 1;
        assert_eq!(seen, [[[1; 3]; 3]; 3]);
        assert_eq!((FACES[0], EDGES[0], CORNERS[0]), ([0, 1, 1], [0, 0, 1], [0, 0, 0]));
    }

    #[test]
    fn the_normalised_average_keeps_a_constant() {
        let w = 1.0 / 27.0;
        let c = BoxCoeffs { center: w, face: w, edge: w, corner: w };
        assert!((c.apply(&cube(|_, _, _| 3.5)) - 3.5).abs() < 1e-14);
    }
}
