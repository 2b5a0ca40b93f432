//! Beyond the book: 2.5D streaming (Micikevicius, "3D finite difference computation on GPUs
//! using CUDA", 2009; the `in_prev`/`in_curr`/`in_next` of PMPP Fig. 8.12 without the shared
//! plane). Each thread owns a `ROWS × V` patch of an x–y plane and walks a run of z planes;
//! its z neighbours rotate through registers, so DRAM sees each plane once. There are no
//! barriers: the x–y neighbours of a plane (its halo) are read straight from global memory, one
//! plane ahead, where this thread's and its neighbours' loads brought them into L1 and L2.
//!
//! What makes it fast is bytes in flight (Little's law): rows are loaded as 16-byte vectors
//! (`V` = 4 in `f32`, 2 in `f64`); every load of an iteration is issued before the first use,
//! none behind a branch (reads are clamped into the grid, boundary points selected after); and
//! each thread asks L2 to prefetch the plane after its register queue (`PREFETCH`), which keeps
//! DRAM busy without holding a register. The book's kernels have one 4-byte load per thread in
//! flight and a barrier per plane. In the Hopper build, loads and stores carry L2 eviction
//! priorities (`device::l2`): the two planes a run of planes shares with the next run along z
//! stay in L2 until that run reads them, and the output leaves first. Results are bitwise those
//! of the CPU reference: the same formula (`Coeffs::apply`) in the same order.
//!
//! The constants (`V`, `ROWS`, `AHEAD`, `PREFETCH` here; block shape and planes per block at
//! launch) were chosen by a sweep on an H200: see `tiles::STREAMING_F32` and the report.
//!
//! A launch writes one [`Window`] of the grid, a range of its planes: all of them, or, on a GPU of
//! a distributed run, the planes it sends to its neighbours before the rest.
//!
//! **Along y.** The same kernel walks the grid along y instead (`ALONG_Y`), its blocks tiling the
//! x–z cross-section. A walk is fastest when the GPU holds a block for every tile of the
//! cross-section at once (one wave, no run starting after its neighbour), and a cross-section of
//! more than about 2 MiB (`f64`) does not fit: where the x–y plane is that large and the x–z one
//! is not (`256×512×1024` `f64`: 4 MiB against 2 MiB), the host walks along y (docs/stencil-h200.md).
//!
//! **Back and forth.** In a run of time steps launched in one wave, a step can store its last
//! planes at L2's normal priority ([`Walk::keep`]) and the next walk the other way
//! ([`Walk::backwards`]): it starts on the planes just written, read from L2 instead of DRAM. The
//! queue is the same; walking backwards, the plane behind is the one above. Each direction is
//! its own copy of the loop (`walk_planes::<BACKWARDS>`), so the loop spends no instruction on it.

use super::{Coeffs, Grid3, Neighbours};
use crate::Real;
use crate::device::thread::*;
use crate::device::{l2, load_vector, prefetch_l2};

/// The `ROWS × V` points of one plane that a thread owns.
type Patch<T, const V: usize, const ROWS: usize> = [[T; V]; ROWS];

/// The current plane's points around a thread's patch: the rows above and below it, the
/// columns left and right of it.
#[derive(Clone, Copy)]
struct Halo<T, const V: usize, const ROWS: usize> {
    above: [T; V],
    below: [T; V],
    left: [T; ROWS],
    right: [T; ROWS],
}

/// The planes one launch writes, `z_begin..z_end`: points outside are neither computed nor
/// written, and the grid's faces inside keep their input.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub z_begin: u32,
    pub z_end: u32,
}

/// Which way one launch's blocks walk their runs of planes, and how many of each run's last
/// planes they store to stay in L2. A time step that keeps planes is followed by one that walks
/// the other way, so it reads first what the step before wrote last, from L2 instead of DRAM.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Walk {
    /// Nonzero: from the run's last plane back to its first.
    pub backwards: u32,
    /// Planes at the end of each run stored at L2's normal priority instead of first-evicted.
    pub keep: u32,
}

impl Walk {
    /// From first plane to last, keeping none in L2.
    pub const FORWARD: Self = Self { backwards: 0, keep: 0 };
}

/// One time step of the stencil on `window`; boundary points copy their input. The kernel walks
/// along z, or along y if `ALONG_Y` (then "plane" `i` is row `i` of every z plane, and a patch's
/// rows are z planes): the same code with the two axes' sizes and strides swapped. Each block
/// walks its run of planes in the direction `walk` gives; walking backwards, the plane behind
/// (`in_prev`) is the one above, and the same formula takes each neighbour by its axis.
///
/// # Safety
/// `input` and `output` hold `grid.len()` elements each, start 16-byte aligned and do not
/// overlap; `V` is a power of two that divides `grid.nx`; `window.z_begin < window.z_end <=
/// grid.nz`. Along z, the launch covers the x–y plane with blocks of `V`-wide, `ROWS`-tall
/// patches per thread, and `gridDim.z` blocks share the window's planes; along y, the blocks
/// cover the x extent and the window's planes (`ROWS` planes per thread), and `gridDim.z` blocks
/// share the rows.
#[inline(always)]
pub unsafe fn stencil_streaming<
    T: Real,
    const V: usize,
    const ROWS: usize,
    const AHEAD: usize,
    const PREFETCH: usize,
    const ALONG_Y: bool,
>(
    input: *const T,
    output: *mut T,
    grid: Grid3,
    c: Coeffs<T>,
    window: Window,
    walk: Walk,
) {
    // A copy of the walk for each direction, so that the loop spends no instruction on it.
    // SAFETY: per the caller.
    unsafe {
        if walk.backwards != 0 {
            walk_planes::<T, V, ROWS, AHEAD, PREFETCH, ALONG_Y, true>(
                input, output, grid, c, window, walk.keep,
            )
        } else {
            walk_planes::<T, V, ROWS, AHEAD, PREFETCH, ALONG_Y, false>(
                input, output, grid, c, window, walk.keep,
            )
        }
    }
}

/// [`stencil_streaming`] walking each run of planes forwards or `BACKWARDS`, keeping its last
/// `keep` planes in L2.
///
/// # Safety
/// As [`stencil_streaming`].
#[inline(always)]
unsafe fn walk_planes<
    T: Real,
    const V: usize,
    const ROWS: usize,
    const AHEAD: usize,
    const PREFETCH: usize,
    const ALONG_Y: bool,
    const BACKWARDS: bool,
>(
    input: *const T,
    output: *mut T,
    grid: Grid3,
    c: Coeffs<T>,
    window: Window,
    keep: u32,
) {
    let nx = grid.nx;
    // The walked axis (`i`: its planes, `n_stream` of them, `stream_stride` apart) and the axis
    // of a patch's rows (`j`): z and y, or y and z. The window's planes are the walk's range
    // along z, or the rows' along y; along the other axis the launch covers the whole grid.
    let (n_stream, n_rows, stream_stride, row_stride) = if ALONG_Y {
        (grid.ny, grid.nz, grid.row_stride(), grid.plane_stride())
    } else {
        (grid.nz, grid.ny, grid.plane_stride(), grid.row_stride())
    };
    let (walked, rows_written) = if ALONG_Y {
        (0..grid.ny, window.z_begin..window.z_end)
    } else {
        (window.z_begin..window.z_end, 0..grid.ny)
    };
    let k_start = (block_idx_x() * block_dim_x() + thread_idx_x()) * V as u32;
    let j_start = rows_written.start + (block_idx_y() * block_dim_y() + thread_idx_y()) * ROWS as u32;
    let planes = (walked.end - walked.start).div_ceil(grid_dim_z());
    let i_start = walked.start + block_idx_z() * planes;
    let i_end = (i_start + planes).min(walked.end);
    if k_start >= nx || j_start >= rows_written.end || i_start >= i_end {
        return;
    }

    // Every read is clamped into the grid, so no load sits behind a branch: a clamped value
    // belongs to a boundary point or a row past the grid, and is never used. Planes are
    // clamped to the block's run and the one plane on each side of it.
    let (i_first, i_last) = (i_start.saturating_sub(1), i_end.min(n_stream - 1));
    let plane = |i: u32| i.clamp(i_first, i_last) as usize * stream_stride;
    let row = |j: u32| j.min(n_rows - 1) as usize * row_stride + k_start as usize;
    let rows: [usize; ROWS] = core::array::from_fn(|r| row(j_start + r as u32));
    let (above, below) = (row(j_start.saturating_sub(1)), row(j_start + ROWS as u32));
    let left = usize::from(k_start > 0);
    let right = if k_start + (V as u32) < nx { V } else { V - 1 };
    // SAFETY (loads): every offset lies in the grid; `k_start` is a multiple of `V`, which
    // divides `nx`, so each row of a patch is `V` aligned elements of one grid row.
    let load_patch = |i: u32, policy: l2::Policy| -> Patch<T, V, ROWS> {
        let at = plane(i);
        core::array::from_fn(|r| unsafe { l2::load(input.add(at + rows[r]), policy) })
    };
    let load_halo = |i: u32| -> Halo<T, V, ROWS> {
        let at = plane(i);
        unsafe {
            Halo {
                above: load_vector(input.add(at + above)),
                below: load_vector(input.add(at + below)),
                left: core::array::from_fn(|r| *input.add(at + rows[r] - left)),
                right: core::array::from_fn(|r| *input.add(at + rows[r] + right)),
            }
        }
    };
    let x_interior: [bool; V] = core::array::from_fn(|e| (k_start + e as u32).wrapping_sub(1) < nx - 2);
    let y_interior: [bool; ROWS] =
        core::array::from_fn(|r| (j_start + r as u32).wrapping_sub(1) < n_rows - 2);

    // The walk: from `i_first_walked`, `ahead(i, d)` is the plane `d` steps past `i` in its
    // direction (past the grid's end: clamped by `plane`), `behind` the plane before the first.
    let ahead = |i: u32, d: u32| if BACKWARDS { i.saturating_sub(d) } else { i + d };
    let (i_first_walked, behind) =
        if BACKWARDS { (i_end - 1, i_end) } else { (i_start, i_start.wrapping_sub(1)) };
    let policies = RunPolicies::new(i_start, i_end, Walk { backwards: u32::from(BACKWARDS), keep });

    // The register queue along the walk: `in_prev`, `in_curr` (with its halo), `in_next`, and
    // the `AHEAD` planes after it, whose loads are in flight.
    let mut in_prev = load_patch(behind, policies.unshared);
    let mut in_curr = load_patch(i_first_walked, policies.unshared);
    let mut halo = load_halo(i_first_walked);
    let next = ahead(i_first_walked, 1);
    let mut in_next = load_patch(next, policies.load(next));
    let mut in_ahead: [Patch<T, V, ROWS>; AHEAD] = core::array::from_fn(|a| {
        let i = ahead(i_first_walked, 2 + a as u32);
        load_patch(i, policies.load(i))
    });
    let mut i = i_first_walked;
    for _ in i_start..i_end {
        // Start the loads of the next plane's halo and of the plane entering the queue.
        let next_halo = load_halo(ahead(i, 1));
        let i_entering = ahead(i, 2 + AHEAD as u32);
        let entering = load_patch(i_entering, policies.load(i_entering));
        if PREFETCH > 0 {
            let at = plane(ahead(i, 2 + (AHEAD + PREFETCH) as u32));
            for &row in &rows {
                // SAFETY: the offset lies in the grid.
                unsafe { prefetch_l2(input.add(at + row)) };
            }
        }

        let z_interior = i.wrapping_sub(1) < n_stream - 2;
        let at = i as usize * stream_stride;
        for r in 0..ROWS {
            let out: [T; V] = core::array::from_fn(|e| {
                let center = in_curr[r][e];
                let row_minus = if r == 0 { halo.above[e] } else { in_curr[r - 1][e] };
                let row_plus = if r == ROWS - 1 { halo.below[e] } else { in_curr[r + 1][e] };
                let (stream_minus, stream_plus) =
                    if BACKWARDS { (in_next[r][e], in_prev[r][e]) } else { (in_prev[r][e], in_next[r][e]) };
                let (y_minus, y_plus, z_minus, z_plus) = if ALONG_Y {
                    (stream_minus, stream_plus, row_minus, row_plus)
                } else {
                    (row_minus, row_plus, stream_minus, stream_plus)
                };
                let value = c.apply(Neighbours {
                    center,
                    x_minus: if e == 0 { halo.left[r] } else { in_curr[r][e - 1] },
                    x_plus: if e == V - 1 { halo.right[r] } else { in_curr[r][e + 1] },
                    y_minus,
                    y_plus,
                    z_minus,
                    z_plus,
                });
                if z_interior && y_interior[r] && x_interior[e] { value } else { center }
            });
            if j_start + (r as u32) < rows_written.end {
                // SAFETY: row `j_start + r` is in the grid, so `rows[r]` is its unclamped
                // offset; aligned as loaded.
                unsafe { l2::store(output.add(at + rows[r]), out, policies.store(i)) };
            }
        }

        in_prev = in_curr;
        in_curr = in_next;
        halo = next_halo;
        if AHEAD == 0 {
            in_next = entering;
        } else {
            in_next = in_ahead[0];
            in_ahead.rotate_left(1);
            in_ahead[AHEAD - 1] = entering;
        }
        i = ahead(i, 1);
    }
}

/// The L2 eviction policies of a block's run of planes `i_start..i_end` (`device::l2`),
/// walked as `walk` says: the planes it shares with the next run along the walk (its last, and
/// the one past it), which that run's blocks read again a wave later, are kept last; the output
/// goes first, but for the run's last `walk.keep` planes, which the next step reads first.
#[derive(Clone, Copy)]
pub(super) struct RunPolicies {
    shared: l2::Policy,
    /// For planes no other run reads, and the output kept for the next step.
    pub unshared: l2::Policy,
    /// For the output.
    pub written: l2::Policy,
    /// The run, its direction, and the planes kept.
    i_start: u32,
    i_end: u32,
    backwards: bool,
    keep: u32,
}

impl RunPolicies {
    #[inline(always)]
    pub fn new(i_start: u32, i_end: u32, walk: Walk) -> Self {
        Self {
            shared: l2::Policy::evict_last(),
            unshared: l2::Policy::evict_normal(),
            written: l2::Policy::evict_first(),
            i_start,
            i_end,
            backwards: walk.backwards != 0,
            keep: walk.keep,
        }
    }

    /// The policy for loading plane `i` as it enters the queue: kept last from the walk's last
    /// plane on.
    #[inline(always)]
    pub fn load(&self, i: u32) -> l2::Policy {
        match self.backwards {
            true if i <= self.i_start => self.shared,
            true => self.unshared,
            false => self.load_reaching(i, 1),
        }
    }

    /// As [`load`](Self::load), walking forwards, for a stencil that reaches `reach` planes
    /// along z: the next run reads the run's last `reach` planes and the `reach` past it.
    #[inline(always)]
    pub fn load_reaching(&self, i: u32, reach: u32) -> l2::Policy {
        // Wrapping: a plane before the grid wraps to a large `i`, as on the GPU.
        if i.wrapping_add(reach) >= self.i_end { self.shared } else { self.unshared }
    }

    /// The policy for storing plane `i` of the run: normal for the last `keep` planes walked.
    #[inline(always)]
    pub fn store(&self, i: u32) -> l2::Policy {
        let to_last = if self.backwards { i - self.i_start } else { self.i_end - 1 - i };
        if to_last < self.keep { self.unshared } else { self.written }
    }
}

/// Where one thread of the high-order stars' and the box's streaming kernels works: as in the
/// seven-point kernel above, which writes the same lines out (so that its measured PTX stays
/// byte for byte what it was; folding them into this function reorders its instructions).
pub(super) struct ThreadWork {
    /// Its first column (`points_x` per thread along x).
    pub k_start: u32,
    /// Its first row (`rows` per thread along y).
    pub j_start: u32,
    /// Its block's run of planes, `i_start..i_end` (`gridDim.z` blocks share the planes).
    pub i_start: u32,
    pub i_end: u32,
}

/// The [`ThreadWork`] of this thread, `None` if it lies wholly past the grid's end (a launch in
/// one wave may have more runs along z than the planes fill: `gridDim.z` runs of `⌈nz / gridDim.z⌉`).
#[inline(always)]
pub(super) fn thread_work(grid: Grid3, points_x: u32, rows: u32) -> Option<ThreadWork> {
    let k_start = (block_idx_x() * block_dim_x() + thread_idx_x()) * points_x;
    let j_start = (block_idx_y() * block_dim_y() + thread_idx_y()) * rows;
    let planes = grid.nz.div_ceil(grid_dim_z());
    let i_start = block_idx_z() * planes;
    if k_start >= grid.nx || j_start >= grid.ny || i_start >= grid.nz {
        return None;
    }
    Some(ThreadWork { k_start, j_start, i_start, i_end: (i_start + planes).min(grid.nz) })
}
