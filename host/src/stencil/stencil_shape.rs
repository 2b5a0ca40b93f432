//! Which stencil: the seven-point star of the book, the high-order stars of 13 and 25 points,
//! and the 27-point box; their coefficient counts, default coefficients and the thinnest grid
//! each accepts.

use gpu_kernels::stencil::Grid3;
use gpu_kernels::stencil::star::second_derivative_weights;

use crate::{Error, Result};

/// A stencil's set of points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StencilShape {
    /// The book's seven-point star (order 1), seven independent coefficients.
    Star7,
    /// The order-2 star: 13 points, one coefficient per axis and distance.
    Star13,
    /// The order-4 star: 25 points.
    Star25,
    /// The 3×3×3 box: 27 points, one coefficient per distance class.
    Box27,
}

impl StencilShape {
    /// Every shape, by size.
    pub const ALL: [Self; 4] = [Self::Star7, Self::Star13, Self::Star25, Self::Box27];

    /// The shapes beyond the book's seven points, which launch through
    /// [`high_order`](crate::stencil::high_order): the stars of order 2 and 4 and the box.
    pub const HIGH_ORDER: [Self; 3] = [Self::Star13, Self::Star25, Self::Box27];

    /// The name on the command line and in reports (`star13`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Star7 => "star7",
            Self::Star13 => "star13",
            Self::Star25 => "star25",
            Self::Box27 => "box27",
        }
    }

    /// Points the formula reads per output point.
    pub fn points(self) -> usize {
        match self {
            Self::Star7 => 7,
            Self::Star13 => 13,
            Self::Star25 => 25,
            Self::Box27 => 27,
        }
    }

    /// How far the farthest neighbour lies along an axis (the stencil's order `R`): points
    /// within `R` of a face keep their input.
    pub fn radius(self) -> usize {
        match self {
            Self::Star7 | Self::Box27 => 1,
            Self::Star13 => 2,
            Self::Star25 => 4,
        }
    }

    /// Coefficients the formula takes: the star7's seven, a star's `1 + 3R` (the centre, then
    /// x, y and z for distances `1..=R`), the box's four (centre, face, edge, corner).
    pub fn coefficient_count(self) -> usize {
        match self {
            Self::Star7 => 7,
            Self::Star13 | Self::Star25 => 1 + 3 * self.radius(),
            Self::Box27 => 4,
        }
    }

    /// What the coefficients are, in order, for `--help` and errors.
    pub fn coefficient_layout(self) -> &'static str {
        match self {
            Self::Star7 => "c0 (centre), x-, x+, y-, y+, z-, z+",
            Self::Star13 => "centre, x1, x2, y1, y2, z1, z2 (one per axis and distance)",
            Self::Star25 => "centre, x1..x4, y1..y4, z1..z4 (one per axis and distance)",
            Self::Box27 => "centre, face, edge, corner",
        }
    }

    /// The default coefficients: for the stars the Laplacian of unit spacing whose error is of
    /// order `2R` (the seven-point `-6,1,1,1,1,1,1`; the standard central-difference weights for
    /// 13 and 25 points), for the box the normalised average (every weight 1/27).
    pub fn default_coeffs(self) -> Vec<f64> {
        match self {
            Self::Box27 => vec![1.0 / 27.0; 4],
            Self::Star7 => vec![-6.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
            Self::Star13 | Self::Star25 => {
                let (centre, weights) =
                    second_derivative_weights(self.radius()).expect("orders 2 and 4 have weights");
                let mut coeffs = vec![3.0 * centre];
                for _axis in 0..3 {
                    coeffs.extend_from_slice(weights);
                }
                coeffs
            }
        }
    }

    /// `coeffs` if there are as many as the shape takes, else a clear error.
    pub fn check_coeffs(self, coeffs: &[f64]) -> Result<()> {
        if coeffs.len() == self.coefficient_count() {
            return Ok(());
        }
        Err(Error::BadArgument(format!(
            "the {self} stencil takes {} coefficients ({}), not {}",
            self.coefficient_count(),
            self.coefficient_layout(),
            coeffs.len()
        )))
    }

    /// The points each coefficient weighs, in [`coefficient_layout`](Self::coefficient_layout)'s
    /// order: one for each of the star7's, two for a higher-order star's (`±d`) but the
    /// centre's, and the box's 1, 6, 12 and 8 (centre, faces, edges, corners).
    pub fn coefficient_points(self) -> Vec<f64> {
        match self {
            Self::Star7 => vec![1.0; 7],
            Self::Star13 | Self::Star25 => {
                std::iter::once(1.0).chain(std::iter::repeat_n(2.0, 3 * self.radius())).collect()
            }
            Self::Box27 => vec![1.0, 6.0, 12.0, 8.0],
        }
    }

    /// The most one step of `coeffs` can multiply the largest magnitude in the grid by: each
    /// coefficient's magnitude times the points it weighs, summed (12 for the default star7).
    pub fn growth_bound(self, coeffs: &[f64]) -> f64 {
        coeffs.iter().zip(self.coefficient_points()).map(|(c, points)| c.abs() * points).sum()
    }

    /// The first step after which values that start within `±start` may pass `±max` under
    /// `coeffs` (by [`growth_bound`](Self::growth_bound)); `None` if no number of steps can
    /// take them there (a bound of at most 1, or a zero grid). With the default star7 from
    /// values within ±1: step 286 in `f64`, 36 in `f32`.
    pub fn steps_to_overflow(self, coeffs: &[f64], start: f64, max: f64) -> Option<u64> {
        let growth = self.growth_bound(coeffs);
        if growth <= 1.0 || start <= 0.0 || !growth.is_finite() {
            return None;
        }
        // The least `n` with `start · growth^n > max` (logarithms apart: `max / start` itself
        // overflows for a `start` under 1 and the largest `f64`).
        let steps = ((max.ln() - start.ln()) / growth.ln()).floor().max(0.0) + 1.0;
        Some(steps as u64)
    }

    /// Refuses a grid thinner than `2R + 1` along any axis (no interior point), naming the minimum.
    pub fn check_grid(self, grid: Grid3) -> Result<()> {
        let least = 2 * self.radius() + 1;
        let Grid3 { nx, ny, nz } = grid;
        if [nx, ny, nz].iter().all(|&n| n as usize >= least) {
            return Ok(());
        }
        Err(Error::BadShape(format!(
            "the {self} stencil needs every extent to be at least {least} (2·{} + 1); the grid is {nz}×{ny}×{nx}",
            self.radius()
        )))
    }
}

named_on_the_command_line!(StencilShape, "stencil shape");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_counts_match_the_formulas() {
        for shape in StencilShape::ALL {
            assert_eq!(shape.name().parse::<StencilShape>().unwrap(), shape);
            assert_eq!(shape.default_coeffs().len(), shape.coefficient_count(), "{shape}");
            assert!(shape.check_coeffs(&shape.default_coeffs()).is_ok());
        }
        assert_eq!(StencilShape::Star25.points(), 6 * StencilShape::Star25.radius() + 1);
        assert!("star9".parse::<StencilShape>().unwrap_err().to_string().contains("star7, star13"));
    }

    #[test]
    fn default_laplacians_have_zero_sum_and_the_box_averages() {
        for shape in [StencilShape::Star7, StencilShape::Star13, StencilShape::Star25] {
            // Every weight except the centre's stands for two points (a star7 weight for one).
            let (c, points) = (shape.default_coeffs(), shape.coefficient_points());
            let total: f64 = c.iter().zip(points).map(|(c, points)| c * points).sum();
            assert!(total.abs() < 1e-12, "{shape}: {total}");
        }
        let c = StencilShape::Star13.default_coeffs();
        assert_eq!(c, [-7.5, 4.0 / 3.0, -1.0 / 12.0, 4.0 / 3.0, -1.0 / 12.0, 4.0 / 3.0, -1.0 / 12.0]);
        assert_eq!(StencilShape::Box27.default_coeffs(), [1.0 / 27.0; 4]);
    }

    #[test]
    fn the_default_laplacians_may_overflow_and_bounded_coefficients_never() {
        let (f32_max, f64_max) = (f64::from(f32::MAX), f64::MAX);
        let star7 = StencilShape::Star7.default_coeffs();
        assert_eq!(StencilShape::Star7.growth_bound(&star7), 12.0);
        assert_eq!(StencilShape::Star7.steps_to_overflow(&star7, 1.0, f64_max), Some(286));
        assert_eq!(StencilShape::Star7.steps_to_overflow(&star7, 1.0, f32_max), Some(36));
        // The bound is exact for the checkerboard, which the Laplacian multiplies by -12 a step.
        let mut value = 1.0_f64;
        let steps = (1..).find(|_| {
            value *= -12.0;
            !value.is_finite()
        });
        assert_eq!(steps, Some(286));
        // Larger starting values get there sooner, smaller ones later; a zero grid never does.
        assert_eq!(StencilShape::Star7.steps_to_overflow(&star7, 144.0, f64_max), Some(284));
        assert_eq!(StencilShape::Star7.steps_to_overflow(&star7, 0.99, f64_max), Some(286));
        assert_eq!(StencilShape::Star7.steps_to_overflow(&star7, 1.0 / 144.0, f64_max), Some(288));
        assert_eq!(StencilShape::Star7.steps_to_overflow(&star7, 0.0, f64_max), None);
        let heat = [0.4, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1];
        assert_eq!(StencilShape::Star7.steps_to_overflow(&heat, 1.0, f32_max), None);
        let box27 = StencilShape::Box27.default_coeffs();
        assert!((StencilShape::Box27.growth_bound(&box27) - 1.0).abs() < 1e-12);
        // The centre weighs one point, every other star weight two: 7.5 + 2·3·(4/3 + 1/12).
        let star13 = StencilShape::Star13.default_coeffs();
        assert!((StencilShape::Star13.growth_bound(&star13) - 16.0).abs() < 1e-12);
        for shape in StencilShape::ALL {
            assert_eq!(shape.coefficient_points().len(), shape.coefficient_count(), "{shape}");
            assert_eq!(shape.coefficient_points().iter().sum::<f64>(), shape.points() as f64, "{shape}");
        }
    }

    #[test]
    fn thin_grids_and_wrong_coefficient_counts_are_refused() {
        let grid = Grid3 { nx: 8, ny: 8, nz: 8 };
        assert!(StencilShape::Star25.check_grid(grid).unwrap_err().to_string().contains("at least 9"));
        assert!(StencilShape::Star13.check_grid(grid).is_ok());
        assert!(StencilShape::Star13.check_grid(Grid3 { nx: 4, ..grid }).is_err());
        let err = StencilShape::Box27.check_coeffs(&[1.0; 7]).unwrap_err().to_string();
        assert!(err.contains("takes 4 coefficients (centre, face, edge, corner), not 7"), "{err}");
    }
}
