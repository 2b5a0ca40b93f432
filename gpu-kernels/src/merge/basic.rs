//! PMPP 12.5 (Fig. 12.9), the basic merge kernel: each thread owns `C` consecutive output
//! ranks (the coarsening factor, [`ELEMENTS_PER_THREAD`] in the main entry points), finds
//! where its slice starts and ends in A and B with two co-rank binary searches straight in
//! global memory, and merges the slice sequentially. Simple, but the searches are uncoalesced
//! and every thread pays two of them.
//!
//! [`ELEMENTS_PER_THREAD`]: super::tiles::ELEMENTS_PER_THREAD

use super::keys::MergeKey;
use super::sequential::{co_rank_by, merge_sequential_by};
use crate::device::thread::*;

/// The work of thread `tid` of the grid: outputs `[k_curr, k_next)` of `c`, the `C` keys
/// from `tid * C` on. Threads past the end have nothing to do.
///
/// # Safety
/// `a` holds `m` keys and `b` holds `n`, both sorted ascending; `c` has room for `m + n` keys
/// and overlaps neither; no two threads run with the same `tid` concurrently.
#[inline(always)]
pub unsafe fn merge_basic_thread<K: MergeKey, const C: usize>(
    tid: usize,
    a: *const K,
    m: usize,
    b: *const K,
    n: usize,
    c: *mut K,
) {
    let total = m + n;
    let k_curr = (tid * C).min(total);
    let k_next = (k_curr + C).min(total);
    if k_curr == k_next {
        return;
    }
    // SAFETY: k_curr <= k_next <= m + n; co-ranks are monotone in k, so i_curr <= i_next <= m
    // and j_curr <= j_next <= n, and the slices merged lie in A, B and C; threads write
    // disjoint output ranges.
    unsafe {
        let i_curr = co_rank_by(k_curr, a, m, b, n);
        let i_next = co_rank_by(k_next, a, m, b, n);
        let j_curr = k_curr - i_curr;
        let j_next = k_next - i_next;
        merge_sequential_by(a.add(i_curr), i_next - i_curr, b.add(j_curr), j_next - j_curr, c.add(k_curr));
    }
}

/// Merges `a` (`m` keys) and `b` (`n` keys) into `c`, stable (A first on ties), `C` outputs
/// per thread.
///
/// # Safety
/// As [`merge_basic_thread`]; the launch has at least `ceil((m + n) / C)` threads along x.
#[inline(always)]
pub unsafe fn merge_basic<K: MergeKey, const C: usize>(
    a: *const K,
    m: usize,
    b: *const K,
    n: usize,
    c: *mut K,
) {
    let tid = grid_thread_x();
    // SAFETY: per the caller; every thread has its own `tid`.
    unsafe { merge_basic_thread::<K, C>(tid, a, m, b, n, c) }
}
