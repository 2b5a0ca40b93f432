//! Beyond the book: the order-`R` star of `star_streaming.rs` with two rows per thread, whose y
//! neighbours each thread reads once for both rows. The formula's steps are taken apart
//! ([`weigh`], [`weigh_pair`]) and run in its order for each row: the centre and the x arm of
//! each row in turn, then the y arm distance by distance for both rows at once, then the z arm.
//! At distance `d` the first row `j` pairs rows `j − d` and `j + d`, the second row `j + 1` pairs
//! `j + 1 − d` and `j + 1 + d`: two rows enter (`j − d`, `j + 1 + d`) and each meets the row that
//! entered one distance before (the thread's own rows at `d = 1`). So a thread loads `2R` rows
//! for its two rows where two threads of one row each load `2R`, and holds four rows at a time
//! instead of all `4R`. The z queue holds both rows' patches; no barriers, no shared memory.
//! With `AHEAD`, the `2R` rows of the y arm are loaded a plane ahead of their use, as the one-row
//! kernel's halo is (their latency hidden by the thread's own work on the plane before, at the
//! cost of holding them in registers); the x arm's patches are loaded in the iteration that
//! uses them either way. Two sets of rows alternate, the plane's and the next one's, in a loop
//! of two phases after which the z queue shifts by two planes, so the rows are never moved
//! between registers and the queue's planes half as often (ptxas 13.5, sm_90, star25: 372
//! instructions a plane in `f32` and 298 in `f64`, against 432 and 384 with one set replaced
//! every plane, and 207 and 232 registers against 219 and 234).
//!
//! Results are bitwise those of the CPU reference: each point's formula runs the same operations
//! in the same order (`StarCoeffs::apply`).

use super::Grid3;
use super::star::{Arm, StarCoeffs, weigh, weigh_pair};
use super::star_streaming::{patch_x_interior, x_arm};
use super::streaming::{RunPolicies, ThreadWork, Walk, thread_work};
use super::tiles::{RING_QUEUE, SHAPE_PREFETCH};
use crate::Real;
use crate::device::{l2, load_vector, opaque, prefetch_l2, store_vector};

/// Rows per thread.
const ROWS: usize = 2;

/// One time step of the order-`R` star, two rows per thread; points within `R` of a face copy
/// their input.
///
/// # Safety
/// As `stencil_star_streaming`: `input` and `output` hold `grid.len()` elements each, start
/// 16-byte aligned and do not overlap; `V` is a power of two that divides `grid.nx`; the launch
/// covers the x–y plane with `V`-wide patches of two rows, one per thread, and `gridDim.z`
/// blocks share the planes along z.
#[inline(always)]
pub unsafe fn stencil_star_rows_streaming<
    T: Real,
    const R: usize,
    const V: usize,
    const QUEUE: usize,
    const AHEAD: bool,
>(
    input: *const T,
    output: *mut T,
    grid: Grid3,
    c: StarCoeffs<T, R>,
) {
    const { assert!(QUEUE == 2 * R + 1, "the z queue holds the plane and R on each side") };
    const { assert!(!AHEAD || QUEUE > RING_QUEUE, "the y rows alternate over two phases: a shifted queue") };
    let Grid3 { nx, ny, nz } = grid;
    let Some(ThreadWork { k_start, j_start: j, i_start, i_end }) = thread_work(grid, V as u32, ROWS as u32)
    else {
        return;
    };

    // Planes are clamped to the run and the `R` planes on each side of it, rows and columns to
    // the grid: a clamped value belongs to a point within `R` of a face, which keeps its input
    // (or to the second row past the grid's last, which is not stored).
    let (i_first, i_last) = (i_start.saturating_sub(R as u32), (i_end + R as u32 - 1).min(nz - 1));
    let plane = |i: u32| i.clamp(i_first, i_last) as usize * grid.plane_stride();
    let row = |d: i64| (j as i64 + d).clamp(0, ny as i64 - 1) as usize * grid.row_stride();
    let mine: [usize; ROWS] = core::array::from_fn(|r| row(r as i64) + k_start as usize);
    // L2 eviction hints for 8-byte elements only, as in `stencil_star_streaming`.
    let hinted = size_of::<T>() == 8;
    let policies = RunPolicies::new(i_start, i_end, Walk::FORWARD);
    // SAFETY (loads): every offset lies in the grid; `k_start` is a multiple of `V`, which
    // divides `nx`, so a patch is `V` aligned elements of one row.
    let load_patch = |i: u32, at: usize| -> [T; V] {
        let (p, policy) = (unsafe { input.add(plane(i) + at) }, policies.load_reaching(i, R as u32));
        unsafe { if hinted { l2::load(p, policy) } else { load_vector(p) } }
    };
    let load = |i: u32, at: usize| -> [T; V] { unsafe { load_vector(input.add(plane(i) + at)) } };
    // The y arm's rows that enter at distance `d + 1`: `j − d − 1` (minus) and `j + d + 2` (plus).
    let y_minus = |i: u32, d: usize| load(i, row(-1 - d as i64) + k_start as usize);
    let y_plus = |i: u32, d: usize| load(i, row(2 + d as i64) + k_start as usize);
    let y_rows =
        |i: u32| -> [([T; V], [T; V]); R] { core::array::from_fn(|d| (y_minus(i, d), y_plus(i, d))) };
    let sides = R.div_ceil(V);
    let left_of = |n: usize| (k_start as i64 - ((n + 1) * V) as i64).max(0) as usize;
    let right_of = |n: usize| (k_start as usize + (n + 1) * V).min(nx as usize - V);
    let interior = |v: u32, n: u32| v >= R as u32 && v + (R as u32) < n;
    let x_interior = patch_x_interior::<R, V>(k_start as usize, nx as usize);
    let y_interior: [bool; ROWS] = core::array::from_fn(|r| interior(j + r as u32, ny));
    let second_row_in_grid = j + 1 < ny;

    // The z queue, planes `i − R ..= i + R`, both rows of each (a ring or shifted, as in
    // `stencil_star_streaming`).
    let mut queue: [[[T; V]; ROWS]; QUEUE] = core::array::from_fn(|q| {
        let i = (i_start + q as u32).wrapping_sub(R as u32);
        core::array::from_fn(|r| load_patch(i, mine[r]))
    });
    // With `AHEAD`, the y rows of the plane in phase 0 and of the plane in phase 1 (each set
    // loaded in the phase before its own; without `AHEAD`, zeros that the compiler drops).
    let zeros = [([T::default(); V], [T::default(); V]); R];
    let mut y_sets = if AHEAD { [y_rows(i_start), zeros] } else { [zeros; 2] };
    let mut i = i_start;
    // Plane `i` in phase `$phase`.
    macro_rules! plane {
        ($phase:literal) => {{
            // Opaque, so that later phases' loads are not hoisted into this one.
            let i = opaque(i as i32) as u32;
            let slot = |q: usize| ($phase + q) % QUEUE;
            let entering: [[T; V]; ROWS] = core::array::from_fn(|r| load_patch(i + R as u32 + 1, mine[r]));
            // SAFETY: the offsets lie in the grid (clamped).
            unsafe {
                prefetch_l2(input.add(plane(i + R as u32 + 1 + SHAPE_PREFETCH as u32) + mine[0]));
                prefetch_l2(input.add(plane(i + R as u32 + 1 + SHAPE_PREFETCH as u32) + mine[1]));
            }
            let centre = queue[slot(R)];
            let y_current = y_sets[$phase % 2];
            if AHEAD {
                y_sets[($phase + 1) % 2] = y_rows(i + 1);
            }

            // The centre and the x arm, one row at a time (its patches beside it, as many as
            // hold `R` points; at the grid's ends a clamped patch stands in).
            let mut sum: [[T; V]; ROWS] = core::array::from_fn(|r| {
                let at = row(r as i64);
                let left: [[T; V]; R] = core::array::from_fn(|n| load(i, at + left_of(n.min(sides - 1))));
                let right: [[T; V]; R] = core::array::from_fn(|n| load(i, at + right_of(n.min(sides - 1))));
                core::array::from_fn(|e| {
                    weigh(c.center * centre[r][e], c.x, x_arm(centre[r], &left, &right, e))
                })
            });
            // The y arm of both rows, distance by distance (`d + 1`): rows `j − d − 1` and
            // `j + d + 2` enter; `minus` is row `j − d` (the second row's minus side at this
            // distance), `plus` row `j + d + 1` (the first row's plus side).
            let (mut minus, mut plus) = (centre[0], centre[1]);
            // Without `AHEAD` the rows are loaded here, as `y_rows` would, one at a time: so
            // written, the kernels without it compile to the PTX they had before `AHEAD` was added.
            for d in 0..R {
                let entering_minus = if AHEAD { y_current[d].0 } else { y_minus(i, d) };
                let entering_plus = if AHEAD { y_current[d].1 } else { y_plus(i, d) };
                sum[0] = core::array::from_fn(|e| weigh_pair(sum[0][e], c.y[d], entering_minus[e], plus[e]));
                sum[1] = core::array::from_fn(|e| weigh_pair(sum[1][e], c.y[d], minus[e], entering_plus[e]));
                (minus, plus) = (entering_minus, entering_plus);
            }
            // The z arm from the queue.
            let z_interior = interior(i, nz);
            let out: [[T; V]; ROWS] = core::array::from_fn(|r| {
                core::array::from_fn(|e| {
                    let z = Arm {
                        minus: core::array::from_fn(|d| queue[slot(R - 1 - d)][r][e]),
                        plus: core::array::from_fn(|d| queue[slot(R + 1 + d)][r][e]),
                    };
                    let value = weigh(sum[r][e], c.z, z);
                    if z_interior && y_interior[r] && x_interior(e) { value } else { centre[r][e] }
                })
            });
            for r in 0..ROWS {
                if r == 0 || second_row_in_grid {
                    // SAFETY: the row is in the grid, so `mine[r]` is its unclamped offset.
                    unsafe {
                        let at = output.add(i as usize * grid.plane_stride() + mine[r]);
                        if hinted {
                            l2::store(at, out[r], policies.written)
                        } else {
                            store_vector(at, out[r])
                        }
                    }
                }
            }
            queue[slot(0)] = entering;
        }};
    }
    if QUEUE <= RING_QUEUE {
        ring_loop!(plane, i, i_end, QUEUE; 0 1 2 3 4);
    } else if AHEAD {
        // Two phases, one for each set of y rows.
        shift_loop!(plane, i, i_end, queue, QUEUE, 2; 0 1);
    } else {
        shift_loop!(plane, i, i_end, queue, QUEUE, 1; 0);
    }
}
