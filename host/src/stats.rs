//! Small statistics for timings.

use crate::Result;

/// Runs `run` once to warm up, then `repeat` more times, and returns the median of the
/// timed runs (`repeat` ≥ 1).
pub fn median_after_warm_up(repeat: usize, mut run: impl FnMut() -> Result<f64>) -> Result<f64> {
    run()?;
    let samples = (0..repeat.max(1)).map(|_| run()).collect::<Result<Vec<_>>>()?;
    Ok(median(&samples).expect("at least one run"))
}

/// The median of `samples` (the mean of the middle two for an even count); `None` if empty.
pub fn median(samples: &[f64]) -> Option<f64> {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(sorted[n / 2]),
        _ => Some((sorted[n / 2 - 1] + sorted[n / 2]) / 2.0),
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
