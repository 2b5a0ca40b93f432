//! Comparing a GPU result with a CPU reference: max absolute and relative error, and a
//! verdict against the element type's tolerance. Unwritten (poisoned) or NaN outputs fail.

use crate::Element;

/// How far a result is from its reference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Comparison {
    /// Largest `|out - ref|` over the elements.
    pub max_abs_error: f64,
    /// `max_abs_error` over the largest `|ref|` (the scale of the data).
    pub max_rel_error: f64,
    /// Elements where one side is NaN or infinite and the other is not the same value.
    pub non_finite_mismatches: usize,
    /// Whether the lengths agree, nothing mismatches and the error is within tolerance.
    pub ok: bool,
}

/// Compares `out` with `reference` elementwise.
pub fn compare<T: Element>(out: &[T], reference: &[T]) -> Comparison {
    let mut max_abs_error = 0.0f64;
    let mut scale = 0.0f64;
    let mut non_finite_mismatches = 0;
    for (&o, &r) in out.iter().zip(reference) {
        let (o, r) = (o.to_f64(), r.to_f64());
        if o.is_finite() && r.is_finite() {
            max_abs_error = max_abs_error.max((o - r).abs());
            scale = scale.max(r.abs());
        } else if !(o == r || (o.is_nan() && r.is_nan())) {
            non_finite_mismatches += 1;
        }
    }
    let max_rel_error = if scale > 0.0 { max_abs_error / scale } else { max_abs_error };
    let ok = out.len() == reference.len() && non_finite_mismatches == 0 && max_rel_error <= T::TOLERANCE;
    Comparison { max_abs_error, max_rel_error, non_finite_mismatches, ok }
}

#[cfg(test)]
mod tests {
    use super::compare;

    #[test]
    fn equal_arrays_pass_with_zero_error() {
        let c = compare(&[1.0f32, -2.0, 3.0], &[1.0, -2.0, 3.0]);
        assert!(c.ok);
        assert_eq!(c.max_abs_error, 0.0);
    }

    #[test]
    fn error_beyond_tolerance_fails() {
        let c = compare(&[1.0f64, 2.0 + 1e-9], &[1.0, 2.0]);
        assert!(!c.ok, "{c:?}");
        assert!((c.max_rel_error - 0.5e-9).abs() < 1e-12);
        assert!(compare(&[1.0f32, 2.0 + 1e-7], &[1.0, 2.0]).ok);
    }

    #[test]
    fn poisoned_nan_output_fails() {
        let c = compare(&[1.0f32, f32::NAN], &[1.0, 2.0]);
        assert!(!c.ok);
        assert_eq!(c.non_finite_mismatches, 1);
    }

    #[test]
    fn length_mismatch_fails() {
        assert!(!compare(&[1.0f32], &[1.0, 2.0]).ok);
    }

    #[test]
    fn matching_infinities_pass() {
        assert!(compare(&[f64::INFINITY, 1.0], &[f64::INFINITY, 1.0]).ok);
        assert!(!compare(&[f64::NEG_INFINITY, 1.0], &[f64::INFINITY, 1.0]).ok);
    }
}
