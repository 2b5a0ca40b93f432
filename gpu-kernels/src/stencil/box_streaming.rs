//! Beyond the book: the 27-point box stencil on the streaming kernel's design (`streaming.rs`).
//! Each thread owns `V` consecutive points of a row and walks a run of z planes. Of each plane it
//! loads its 3 × (V + 2) neighbourhood (its row and the rows above and below, one column beyond
//! each end; the other rows and the end columns come from L1 and L2, where neighbouring threads'
//! loads brought them) and reduces it at once to the three sums per point that the formula needs
//! of a plane (`PlaneSums`: centre, cross, diagonal), so each plane's in-plane additions are done
//! once, not once for each of the three cubes that hold it. A queue of three planes' sums in
//! registers makes DRAM see each plane once. No barriers, no shared memory; every read clamped
//! into the grid. In the Hopper build, the planes a run shares with the next run along z are
//! kept in L2 and the output leaves it first (`device::l2`, as in `streaming.rs`: 3–4 points of
//! the copy on an H200).
//!
//! Results are bitwise those of the CPU reference: the same formula (`BoxCoeffs::apply`, which
//! is `apply_sums` of the planes' `PlaneSums`).

use super::Grid3;
use super::box27::{BoxCoeffs, PlaneSums};
use super::streaming::{RunPolicies, ThreadWork, Walk, thread_work};
use crate::Real;
use crate::device::{l2, opaque, prefetch_l2};

/// One plane of a thread's neighbourhood: rows `j − 1`, `j`, `j + 1` over its `V` columns, and
/// the column left and right of them.
#[derive(Clone, Copy)]
struct Slab<T, const V: usize> {
    rows: [[T; V]; 3],
    left: [T; 3],
    right: [T; 3],
}

impl<T: Real, const V: usize> Slab<T, V> {
    /// The value at row offset `dy` (0..3) and column `e + dx − 1` of the patch (`dx` in 0..3).
    #[inline(always)]
    fn at(&self, dy: usize, e: usize, dx: usize) -> T {
        match e + dx {
            0 => self.left[dy],
            c if c > V => self.right[dy],
            c => self.rows[dy][c - 1],
        }
    }

    /// The plane sums of each of the patch's `V` points.
    #[inline(always)]
    fn sums(&self) -> [PlaneSums<T>; V] {
        core::array::from_fn(|e| {
            PlaneSums::of(&core::array::from_fn(|dy| core::array::from_fn(|dx| self.at(dy, e, dx))))
        })
    }
}

/// One time step of the box stencil; boundary points copy their input.
///
/// # Safety
/// As [`stencil_star_streaming`](super::stencil_star_streaming): aligned, non-overlapping
/// buffers of `grid.len()` elements, `V` a power of two dividing `grid.nx`, `V`-wide patches.
#[inline(always)]
pub unsafe fn stencil_box_streaming<T: Real, const V: usize>(
    input: *const T,
    output: *mut T,
    grid: Grid3,
    c: BoxCoeffs<T>,
) {
    let Grid3 { nx, ny, nz } = grid;
    let Some(ThreadWork { k_start, j_start: j, i_start, i_end }) = thread_work(grid, V as u32, 1) else {
        return;
    };

    let (i_first, i_last) = (i_start.saturating_sub(1), i_end.min(nz - 1));
    let plane = |i: u32| i.clamp(i_first, i_last) as usize * grid.plane_stride();
    let rows: [usize; 3] = core::array::from_fn(|dy| {
        (j as i64 + dy as i64 - 1).clamp(0, ny as i64 - 1) as usize * grid.row_stride()
    });
    let (left, right) = ((k_start as usize).saturating_sub(1), (k_start as usize + V).min(nx as usize - 1));
    // SAFETY (loads): every offset lies in the grid; `k_start` is a multiple of `V`, which
    // divides `nx`, so each patch row is `V` aligned elements of one grid row.
    let load = |i: u32, policy: l2::Policy| -> Slab<T, V> {
        let at = plane(i);
        unsafe {
            Slab {
                rows: core::array::from_fn(|dy| {
                    l2::load(input.add(at + rows[dy] + k_start as usize), policy)
                }),
                left: core::array::from_fn(|dy| *input.add(at + rows[dy] + left)),
                right: core::array::from_fn(|dy| *input.add(at + rows[dy] + right)),
            }
        }
    };
    let interior = |v: u32, n: u32| v.wrapping_sub(1) < n - 2;
    let x_interior: [bool; V] = core::array::from_fn(|e| interior(k_start + e as u32, nx));
    let y_interior = interior(j, ny);
    let here = rows[1] + k_start as usize;

    // The sums of planes `i − 1`, `i`, `i + 1`, a ring: in the `p`-th iteration of every three,
    // slot `(p + q) % 3` holds plane `i − 1 + q`, so the entering plane takes the leaving one's
    // slot and the queue advances without moving registers (`ring_loop`).
    let policies = RunPolicies::new(i_start, i_end, Walk::FORWARD);
    let mut queue: [[PlaneSums<T>; V]; 3] = [
        load(i_start.wrapping_sub(1), policies.unshared).sums(),
        load(i_start, policies.unshared).sums(),
        load(i_start + 1, policies.load(i_start + 1)).sums(),
    ];
    let mut i = i_start;
    // Plane `i` in phase `$phase`.
    macro_rules! plane {
        ($phase:literal) => {{
            // Opaque, so that later phases' loads are not hoisted into this one.
            let i = opaque(i as i32) as u32;
            let slot = |q: usize| ($phase + q) % 3;
            // Loaded now, reduced after this plane's points: the loads' latency overlaps them.
            let entering = load(i + 2, policies.load(i + 2));
            // SAFETY: the offset lies in the grid (clamped).
            unsafe { prefetch_l2(input.add(plane(i + 3) + here)) };
            let z_interior = interior(i, nz);
            let out: [T; V] = core::array::from_fn(|e| {
                let [below, middle, above] = [queue[slot(0)][e], queue[slot(1)][e], queue[slot(2)][e]];
                let value = c.apply_sums(below, middle, above);
                if z_interior && y_interior && x_interior[e] { value } else { middle.centre }
            });
            // SAFETY: the row is in the grid (`j < ny`), so `here` is its unclamped offset.
            unsafe { l2::store(output.add(i as usize * grid.plane_stride() + here), out, policies.written) };
            queue[slot(0)] = entering.sums();
        }};
    }
    ring_loop!(plane, i, i_end, 3; 0 1 2);
}
