//! Beyond the book: temporal blocking. One pass over the grid computes `K` time steps, so DRAM
//! sees each point read once and written once per `K` steps instead of per step (the idea of
//! EBISU and AN5D, ICS'23 / CGO'20: 2.5D streaming along z with a queue per time level).
//!
//! The scheme, and why: a block owns an x–y tile and walks down z, as the streaming kernel
//! does, holding for every time level `t < K` a queue of three planes of its points in
//! registers (`below`, `centre`, `above`: the book's `in_prev`/`in_curr`/`in_next`, Fig. 8.12,
//! once per level; a ring of three slots whose roles turn each plane, so the queue advances
//! without register moves). Level `t + 1` of a plane is computed as soon as level `t` has the plane
//! and both its z neighbours, so the levels trail each other down z, two planes apart (two, not
//! one, so that all `K` levels advance together after one barrier per plane). The x neighbours
//! come from the lanes beside (warp shuffles); the y neighbours from the thread's own rows, and
//! at a warp's top and bottom rows from the warps above and below, through shared memory.
//! Tiles overlap: each level is correct one point further inside the tile than the one before,
//! so a tile of 32 lanes and `warps · ROWS` rows writes its inner `(32 − 2K) × (warps · ROWS − 2K)`
//! points, and the outer `K` of each side are recomputed by its neighbours (the redundant halo
//! work that limits `K`). Overlapped tiles need no grid-wide barrier and no inter-block
//! communication; the register queues need no shared memory beyond two rows per warp and
//! level, so several blocks fit per SM. Planes along z are split into runs per block when the
//! grid has too few tiles to fill the GPU; a run starts `K − 1` planes early to fill its queues.
//!
//! Every point of every level is `Coeffs::apply` on the level before, in the reference's order,
//! and boundary points keep their input at every level, so the result is bitwise that of `K`
//! single steps.

use super::{Coeffs, Grid3, Neighbours};
use crate::Real;
use crate::device::thread::*;
use crate::device::warp::{LANES, from_lane_above, from_lane_below};
use crate::device::{SharedArray, opaque, store_if};

/// The `ROWS` points of one plane that a thread owns (one column x, consecutive rows y),
/// at one time level.
type Column<T, const ROWS: usize> = [T; ROWS];

/// Elements of shared memory a block of `warps` warps needs for fusion depth `k`: for every
/// level below `k`, each warp's top and bottom rows, three times (consecutive planes use
/// different thirds, so one barrier per plane separates writes from reads).
pub const fn temporal_shared_elements(k: usize, warps: usize) -> usize {
    3 * k * warps * 2 * LANES as usize
}

/// Output points per tile along x and y for fusion depth `k`: the tile less `k` on each side.
pub const fn temporal_out_tile(tile: u32, k: usize) -> u32 {
    tile - 2 * k as u32
}

/// `K` time steps of the stencil in one pass; boundary points keep their input.
///
/// # Safety
/// `input` and `output` hold `grid.len()` elements each and do not overlap; blocks are 32
/// threads along x by any number of warps along y, with
/// [`temporal_shared_elements`]`(K, blockDim.y)` elements of shared memory; blocks along x and
/// y step by [`temporal_out_tile`] of the tile (32 and `blockDim.y · ROWS`), and `gridDim.z`
/// blocks share the planes along z. `32 > 2K` and `blockDim.y · ROWS > 2K`.
#[inline(always)]
pub unsafe fn stencil_temporal<T: Real, const K: usize, const ROWS: usize>(
    input: *const T,
    output: *mut T,
    grid: Grid3,
    c: Coeffs<T>,
) {
    let Grid3 { nx, ny, nz } = grid;
    let (lane, warp, warps) = (thread_idx_x(), thread_idx_y(), block_dim_y());
    let tile_rows = warps * ROWS as u32;
    let halo = K as i32;
    // The tile starts `K` points before its output points, which start at a multiple of the
    // output tile.
    let k = (block_idx_x() * temporal_out_tile(LANES, K) + lane) as i32 - halo;
    let j_first = (block_idx_y() * temporal_out_tile(tile_rows, K) + warp * ROWS as u32) as i32 - halo;
    let planes = nz.div_ceil(grid_dim_z());
    let z_start = block_idx_z() * planes;
    let z_end = (z_start + planes).min(nz);

    // Reads are clamped into the grid: a clamped value belongs to a point outside the grid,
    // whose results are never stored and feed only boundary points, which ignore neighbours.
    let column_at = (k.clamp(0, nx as i32 - 1)) as usize;
    let rows: Column<usize, ROWS> = core::array::from_fn(|r| {
        (j_first + r as i32).clamp(0, ny as i32 - 1) as usize * grid.row_stride() + column_at
    });
    let load = |i: i32| -> Column<T, ROWS> {
        let at = i.clamp(0, nz as i32 - 1) as usize * grid.plane_stride();
        // SAFETY: every offset lies in the grid.
        core::array::from_fn(|r| unsafe { *input.add(at + rows[r]) })
    };
    let interior = |v: i32, n: u32| (v as u32).wrapping_sub(1) < n - 2;
    let x_interior = interior(k, nx);
    let y_interior: [bool; ROWS] = core::array::from_fn(|r| interior(j_first + r as i32, ny));
    let stores_x = (halo..LANES as i32 - halo).contains(&(lane as i32)) && (k as u32) < nx;
    let stores_y: [bool; ROWS] = core::array::from_fn(|r| {
        let row_in_tile = (warp * ROWS as u32 + r as u32) as i32;
        (halo..tile_rows as i32 - halo).contains(&row_in_tile) && ((j_first + r as i32) as u32) < ny
    });
    let stores: [bool; ROWS] = core::array::from_fn(|r| {
        let row_in_tile = (warp * ROWS as u32 + r as u32) as i32;
        stores_x
            && (halo..tile_rows as i32 - halo).contains(&row_in_tile)
            && ((j_first + r as i32) as u32) < ny
    });

    // Level `t` of plane `i − 2t` is the centre of its queue during iteration `i`. The run's
    // output planes `z_start..z_end` are level `K` of the centres of level `K − 1`; the first
    // iteration is the first whose level-1 result a stored point depends on.
    //
    // Each level's queue is a ring of three register slots: in the `j`-th iteration of three,
    // slot `j` holds the plane below, `j + 1` the centre, `j + 2` the plane above (mod 3). The
    // loop body is written out three times, so every slot index is a constant and the queue
    // advances by renaming registers, not by moving them; the up to two iterations past `last`
    // store nothing (their level-K planes lie past the run).
    let first = z_start as i32 - halo + 1;
    let last = z_end as i32 - 1 + 2 * (halo - 1);
    let mut queue: [[Column<T, ROWS>; 3]; K] = [[load(first - 1), load(first), load(first + 1)]; K];

    // SAFETY: the launch provides `temporal_shared_elements(K, warps)` elements; each thread
    // writes only its own lane's slots, and one barrier per plane separates the writes to one
    // third from the reads of it (the next two iterations write the other thirds). Slots are
    // laid out `[third][level][warp][top, bottom][lane]`; the first and last warps read their own
    // edge rows in place of a missing neighbour's (values that feed only rows outside the output).
    let edges = unsafe { SharedArray::<T>::at_offset(0) };
    let row_slot = |w: u32, bottom: usize| (w as usize * 2 + bottom) * LANES as usize + lane as usize;
    let (own_top, own_bottom) = (row_slot(warp, 0), row_slot(warp, 1));
    let from_above = row_slot(warp.saturating_sub(1), 1);
    let from_below = row_slot((warp + 1).min(warps - 1), 0);
    let level_slots = warps as usize * 2 * LANES as usize;

    // Iteration `$i`, the `$j`-th of three.
    macro_rules! iteration {
        ($i:expr, $j:literal) => {{
            // Opaque, so that the work of later iterations is not hoisted into this one (it
            // would hold registers across the barrier).
            let i: i32 = opaque($i);
            let (below, centre, above) = ($j, ($j + 1) % 3, ($j + 2) % 3);
            let entering = load(i + 2);
            for (t, levels) in queue.iter().enumerate() {
                let at = ($j * K + t) * level_slots;
                // SAFETY: own slots, see above.
                unsafe {
                    edges.write(at + own_top, levels[centre][0]);
                    edges.write(at + own_bottom, levels[centre][ROWS - 1]);
                }
            }
            sync_threads();
            // From the top level down, so that level `t` may overwrite the `below` slot of
            // level `t + 1`, whose own step this iteration is done.
            for t in (0..K).rev() {
                let plane = i - 2 * t as i32;
                let z_interior = interior(plane, nz);
                let at = ($j * K + t) * level_slots;
                // SAFETY: the neighbouring warps' slots, written before the barrier.
                let (edge_above, edge_below) =
                    unsafe { (edges.read(at + from_above), edges.read(at + from_below)) };
                let [q_below, q_centre, q_above] = [queue[t][below], queue[t][centre], queue[t][above]];
                let level: Column<T, ROWS> = core::array::from_fn(|r| {
                    let center = q_centre[r];
                    let value = c.apply(Neighbours {
                        center,
                        x_minus: from_lane_below(center),
                        x_plus: from_lane_above(center),
                        y_minus: if r == 0 { edge_above } else { q_centre[r - 1] },
                        y_plus: if r == ROWS - 1 { edge_below } else { q_centre[r + 1] },
                        z_minus: q_below[r],
                        z_plus: q_above[r],
                    });
                    if z_interior && x_interior && y_interior[r] { value } else { center }
                });
                if t + 1 < K {
                    queue[t + 1][below] = level;
                } else if size_of::<T>() == 4 && (z_start as i32..z_end as i32).contains(&plane) {
                    // Row stores of 4-byte elements are predicated (no branch): measured faster
                    // for f32 (k4 r8: 719 → 783 Gpoints/s per step at 512³) and slower for f64
                    // (k4 r4: 360 → 311), whose stores stay behind a branch per row (below).
                    let at = plane as usize * grid.plane_stride();
                    for r in 0..ROWS {
                        // SAFETY: the plane is in the grid and `rows[r]` a clamped offset, so
                        // the address is too; where `stores[r]` holds, the point is in the grid
                        // and `rows[r]` its unclamped offset.
                        unsafe { store_if(output.add(at + rows[r]), level[r], stores[r]) };
                    }
                } else if size_of::<T>() != 4 && stores_x && (z_start as i32..z_end as i32).contains(&plane) {
                    let at = plane as usize * grid.plane_stride();
                    for r in 0..ROWS {
                        if stores_y[r] {
                            // SAFETY: the point lies in the grid (`stores_x`, `stores_y`, the
                            // run's planes), so `rows[r]` is its unclamped offset.
                            unsafe { *output.add(at + rows[r]) = level[r] };
                        }
                    }
                }
            }
            queue[0][below] = entering;
        }};
    }

    let mut i = first;
    while i <= last {
        iteration!(i, 0);
        iteration!(i + 1, 1);
        iteration!(i + 2, 2);
        i += 3;
    }
}
