//! Input generators: two sorted arrays of lengths `m` and `n` from a seed, in the shapes that
//! stress a merge differently (how the co-ranks fall, how many ties cross A and B).

use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;

use super::HostKey;
use crate::{Error, Result};

/// Distinct keys of [`Distribution::FewUnique`].
pub const FEW_UNIQUE_KEYS: usize = 16;

/// How the keys of A and B are drawn. Every distribution gives sorted, NaN-free arrays.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Distribution {
    /// Independent sorted uniform keys over the type's range (`[-1, 1]` for floats).
    Uniform,
    /// Keys drawn from 16 values: long runs of ties within and across A and B.
    FewUnique,
    /// Every key of A and B equal: the merge must be all of A, then all of B.
    AllEqual,
    /// Every key of A below every key of B: co-ranks fall at the edges.
    Disjoint,
    /// A holds the even ranks 0, 2, 4, …, B the odd ones: the merge alternates.
    Interleaved,
}

impl Distribution {
    /// All distributions.
    pub const ALL: [Self; 5] =
        [Self::Uniform, Self::FewUnique, Self::AllEqual, Self::Disjoint, Self::Interleaved];

    /// The name used on the command line and in reports (`few-unique`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Uniform => "uniform",
            Self::FewUnique => "few-unique",
            Self::AllEqual => "all-equal",
            Self::Disjoint => "disjoint",
            Self::Interleaved => "interleaved",
        }
    }

    /// One line on what the distribution is.
    pub fn description(self) -> &'static str {
        match self {
            Self::Uniform => "sorted uniform keys over the type's range ([-1, 1] for floats)",
            Self::FewUnique => "keys drawn from 16 values, many ties across A and B",
            Self::AllEqual => "every key equal",
            Self::Disjoint => "all of A below all of B",
            Self::Interleaved => "A holds the even ranks, B the odd ones",
        }
    }

    /// Sorted A of `m` keys and B of `n` keys, the same for the same seed. Fails with
    /// [`Error::OutOfMemory`] when the host cannot hold them.
    /// Large inputs are drawn in parallel, in chunks with generators of their own, so the
    /// result depends on the seed alone.
    pub fn generate<K: HostKey>(self, m: usize, n: usize, seed: u64) -> Result<(Vec<K>, Vec<K>)> {
        // One seed per array.
        let (a_seed, b_seed) = (mix(seed, 0), mix(seed, 1));
        let span = 1u128 << K::LEVEL_BITS;
        let mut a = with_capacity::<K>(m, "A")?;
        let mut b = with_capacity::<K>(n, "B")?;
        match self {
            Self::Uniform => {
                sorted_uniform(&mut a, m, 0, span, a_seed);
                sorted_uniform(&mut b, n, 0, span, b_seed);
            }
            Self::FewUnique => {
                few_unique(&mut a, m, span, a_seed);
                few_unique(&mut b, n, span, b_seed);
            }
            Self::AllEqual => {
                // A quarter of the way up from the middle: not zero, not an extreme.
                let key = K::from_level(level(span / 2 + span / 8, span));
                a.resize(m, key);
                b.resize(n, key);
            }
            Self::Disjoint => {
                sorted_uniform(&mut a, m, 0, span / 2, a_seed);
                sorted_uniform(&mut b, n, span / 2, span, b_seed);
            }
            Self::Interleaved => {
                a.extend((0..m as u64).map(|i| K::from_rank(2 * i)));
                b.extend((0..n as u64).map(|j| K::from_rank(2 * j + 1)));
            }
        }
        Ok((a, b))
    }
}

/// An empty vector with room for `len` keys, or [`Error::OutOfMemory`].
fn with_capacity<K: HostKey>(len: usize, array: &str) -> Result<Vec<K>> {
    let mut keys = Vec::new();
    keys.try_reserve_exact(len).map_err(|_| {
        Error::OutOfMemory(format!("the host cannot hold {len} keys of {} for merge input {array}", K::NAME))
    })?;
    Ok(keys)
}

/// `value` as a level, clipped to the top level of a domain of `span` levels.
fn level(value: u128, span: u128) -> u64 {
    value.min(span - 1) as u64
}

/// Keys per generator when inputs are drawn in parallel.
const CHUNK: usize = 1 << 20;

/// A seed derived from `seed` and `index` (a chunk, or which array).
fn mix(seed: u64, index: u64) -> u64 {
    seed ^ (index + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The generator of chunk `chunk` of an array drawn from `seed`.
fn chunk_rng(seed: u64, chunk: usize) -> SmallRng {
    SmallRng::seed_from_u64(mix(seed, chunk as u64))
}

/// Appends `len` sorted keys drawn uniformly from levels `[low, high)`: the gaps between
/// consecutive keys are uniform in `[0, 2 · (high - low) / (len + 1)]`. Chunks draw their gaps in
/// parallel, twice: once to sum them (where each chunk starts), once to write the keys.
fn sorted_uniform<K: HostKey>(keys: &mut Vec<K>, len: usize, low: u128, high: u128, seed: u64) {
    let mean_gap = ((high - low) / (len as u128 + 1)).min(u64::MAX as u128 / 2) as u64;
    let max_gap = 2 * mean_gap.max(1);
    let gaps = move |chunk: usize, count: usize| {
        let mut rng = chunk_rng(seed, chunk);
        (0..count).map(move |_| u128::from(rng.random_range(0..=max_gap)))
    };
    let chunk_len = |chunk: usize| CHUNK.min(len - chunk * CHUNK);
    let sums: Vec<u128> =
        (0..len.div_ceil(CHUNK)).into_par_iter().map(|chunk| gaps(chunk, chunk_len(chunk)).sum()).collect();
    let starts: Vec<u128> = sums
        .iter()
        .scan(low, |start, sum| {
            let this = *start;
            *start += sum;
            Some(this)
        })
        .collect();
    keys.resize(len, K::from_level(0));
    keys.par_chunks_mut(CHUNK).enumerate().for_each(|(chunk, out)| {
        let mut current = starts[chunk];
        let count = out.len();
        for (key, gap) in out.iter_mut().zip(gaps(chunk, count)) {
            current += gap;
            *key = K::from_level(level(current.min(high - 1), high));
        }
    });
}

/// Appends `len` keys drawn from [`FEW_UNIQUE_KEYS`] values spread over the domain, sorted
/// (counting sort of the draws, chunks counted in parallel).
fn few_unique<K: HostKey>(keys: &mut Vec<K>, len: usize, span: u128, seed: u64) {
    let counts = (0..len.div_ceil(CHUNK))
        .into_par_iter()
        .map(|chunk| {
            let mut rng = chunk_rng(seed, chunk);
            let mut counts = [0usize; FEW_UNIQUE_KEYS];
            for _ in 0..CHUNK.min(len - chunk * CHUNK) {
                counts[rng.random_range(0..FEW_UNIQUE_KEYS)] += 1;
            }
            counts
        })
        .reduce(|| [0; FEW_UNIQUE_KEYS], |x, y| std::array::from_fn(|v| x[v] + y[v]));
    let step = span / FEW_UNIQUE_KEYS as u128;
    for (value, &count) in counts.iter().enumerate() {
        let key = K::from_level(level(value as u128 * step + step / 2, span));
        keys.extend(std::iter::repeat_n(key, count));
    }
}

named_on_the_command_line!(Distribution, "input distribution");

#[cfg(test)]
mod tests {
    use super::*;
    use crate::merge::check_sorted;

    fn every_distribution_gives_sorted_inputs_of_the_right_lengths<K: HostKey>() {
        for d in Distribution::ALL {
            for (m, n) in [(0, 0), (1, 0), (0, 1), (1, 1), (1000, 37), (5000, 5000)] {
                let (a, b) = d.generate::<K>(m, n, 42).unwrap();
                assert_eq!((a.len(), b.len()), (m, n), "{d} {}", K::NAME);
                check_sorted("A", &a).unwrap_or_else(|e| panic!("{d} {}: {e}", K::NAME));
                check_sorted("B", &b).unwrap_or_else(|e| panic!("{d} {}: {e}", K::NAME));
            }
        }
    }

    #[test]
    fn all_types_all_distributions_sorted() {
        every_distribution_gives_sorted_inputs_of_the_right_lengths::<i32>();
        every_distribution_gives_sorted_inputs_of_the_right_lengths::<u32>();
        every_distribution_gives_sorted_inputs_of_the_right_lengths::<i64>();
        every_distribution_gives_sorted_inputs_of_the_right_lengths::<f32>();
        every_distribution_gives_sorted_inputs_of_the_right_lengths::<f64>();
    }

    #[test]
    fn inputs_of_several_chunks_are_sorted_and_seeded() {
        let m = 3 * CHUNK + 7;
        for d in [Distribution::Uniform, Distribution::FewUnique, Distribution::Disjoint] {
            let (a, b) = d.generate::<i64>(m, CHUNK + 1, 5).unwrap();
            assert_eq!((a.len(), b.len()), (m, CHUNK + 1));
            check_sorted("A", &a).unwrap();
            check_sorted("B", &b).unwrap();
            assert_eq!((a.clone(), b), d.generate::<i64>(m, CHUNK + 1, 5).unwrap(), "{d}");
        }
        // Uniform keys keep spreading over the range across chunks.
        let (a, _) = Distribution::Uniform.generate::<i64>(m, 0, 5).unwrap();
        assert!(a[0] < -(1 << 60) && a[m - 1] > 1 << 60);
    }

    #[test]
    fn same_seed_same_inputs() {
        let first = Distribution::Uniform.generate::<f64>(1000, 999, 7).unwrap();
        assert_eq!(first, Distribution::Uniform.generate::<f64>(1000, 999, 7).unwrap());
        assert_ne!(first, Distribution::Uniform.generate::<f64>(1000, 999, 8).unwrap());
    }

    #[test]
    fn shapes_are_what_the_names_say() {
        let (a, b) = Distribution::Uniform.generate::<i64>(10_000, 10_000, 1).unwrap();
        let distinct = |v: &[i64]| v.windows(2).filter(|w| w[0] != w[1]).count() + 1;
        assert!(distinct(&a) > 9_500 && distinct(&b) > 9_500);
        assert!(a[0] < -(1 << 50) && a[9_999] > 1 << 50, "spread over the range");

        let (a, b) = Distribution::FewUnique.generate::<u32>(10_000, 10_000, 1).unwrap();
        let mut all = [a, b].concat();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), FEW_UNIQUE_KEYS);

        let (a, b) = Distribution::AllEqual.generate::<f32>(10, 20, 1).unwrap();
        assert!(a.iter().chain(&b).all(|&x| x == a[0]) && a[0] != 0.0);

        let (a, b) = Distribution::Disjoint.generate::<i32>(1000, 1000, 1).unwrap();
        assert!(a[999] < b[0]);

        let (a, b) = Distribution::Interleaved.generate::<i32>(3, 2, 1).unwrap();
        assert_eq!((a, b), (vec![0, 2, 4], vec![1, 3]));
    }

    #[test]
    fn names_round_trip_and_unknown_names_list_the_choices() {
        for d in Distribution::ALL {
            assert_eq!(d.name().parse::<Distribution>().unwrap(), d);
        }
        assert_eq!("few_unique".parse::<Distribution>().unwrap(), Distribution::FewUnique);
        let err = "gaussian".parse::<Distribution>().unwrap_err().to_string();
        assert!(err.contains("uniform, few-unique, all-equal, disjoint, interleaved"), "{err}");
    }

    #[test]
    fn impossible_sizes_are_an_error_not_an_abort() {
        let err = Distribution::Uniform.generate::<f64>(usize::MAX / 4, 1, 1).unwrap_err();
        assert!(matches!(err, Error::OutOfMemory(_)), "{err}");
    }
}
