//! Beyond the book: the 27-point box stencil on the streaming kernel's design (`streaming.rs`).
//! Each thread owns `ROWS` rows of `V` consecutive points and walks a run of z planes. Of each
//! plane it loads its (`ROWS` + 2) × (`V` + 2) neighbourhood (its rows and the rows above and
//! below them, one column beyond each end; the other rows and the end columns come from L1 and
//! L2, where neighbouring threads' loads brought them) and reduces it at once to the two terms
//! per point the formula takes from a plane (`PlaneTerms`: the plane's weighted sum for the point
//! in it, and for the points above and below it), so each plane's in-plane work is done once, not
//! once for each of the three cubes that hold it. The terms enter each point's sum as their
//! planes arrive (`BoxCoeffs::open`, then `close`), so a thread keeps three values a point in
//! registers (two planes' open sums and one plane's side terms): on an H200 that took the `f32`
//! kernel from 72 registers to 64 (two blocks of 512 threads per SM) and let the `f64` one hold
//! two rows in 128 (half the L1 sectors a point), `tiles::BOX27_F32` and `BOX27_F64`. DRAM sees
//! each plane once. No barriers, no shared memory; every read clamped into the grid. In the
//! Hopper build, the planes a run shares with the next run along z are kept in L2 and the output
//! leaves it first (`device::l2`, as in `streaming.rs`: 3–4 points of the copy on an H200).
//!
//! Results are bitwise those of the CPU reference: the same formula and order of sums
//! (`BoxCoeffs::apply` is `open`, then `close`, of the planes' `PlaneTerms`).

use super::Grid3;
use super::box27::{BoxCoeffs, PlaneTerms};
use super::streaming::{RunPolicies, ThreadWork, Walk, thread_work};
use super::tiles::SHAPE_PREFETCH;
use crate::Real;
use crate::device::{l2, load_vector, opaque, prefetch_l2};

/// One plane of a thread's neighbourhood: its `ROWS` rows and one above and below them (`SPAN`
/// = `ROWS + 2` rows, from `j − 1`), over its `V` columns, and the column left and right of
/// them.
#[derive(Clone, Copy)]
struct Slab<T, const V: usize, const SPAN: usize> {
    rows: [[T; V]; SPAN],
    left: [T; SPAN],
    right: [T; SPAN],
}

impl<T: Real, const V: usize, const SPAN: usize> Slab<T, V, SPAN> {
    /// The value at slab row `y` and column `e + dx − 1` of the patch (`dx` in 0..3).
    #[inline(always)]
    fn at(&self, y: usize, e: usize, dx: usize) -> T {
        match e + dx {
            0 => self.left[y],
            c if c > V => self.right[y],
            c => self.rows[y][c - 1],
        }
    }

    /// The plane terms of each of the thread's `ROWS × V` points, row `r`'s from slab rows
    /// `r .. r + 3`.
    #[inline(always)]
    fn terms<const ROWS: usize>(&self, c: BoxCoeffs<T>) -> [[PlaneTerms<T>; V]; ROWS] {
        core::array::from_fn(|r| {
            core::array::from_fn(|e| {
                let plane = core::array::from_fn(|dy| core::array::from_fn(|dx| self.at(r + dy, e, dx)));
                PlaneTerms::of(&plane, c)
            })
        })
    }
}

/// One time step of the box stencil; boundary points copy their input. Each thread owns `ROWS`
/// rows of `V` points (`SPAN` = `ROWS + 2`: the rows of its neighbourhood; more rows per
/// thread load fewer neighbouring rows per point).
///
/// # Safety
/// As [`stencil_star_streaming`](super::stencil_star_streaming): aligned, non-overlapping
/// buffers of `grid.len()` elements, `V` a power of two dividing `grid.nx`, `V`-wide patches;
/// the launch's blocks cover `ROWS` rows per thread.
#[inline(always)]
pub unsafe fn stencil_box_streaming<T: Real, const V: usize, const ROWS: usize, const SPAN: usize>(
    input: *const T,
    output: *mut T,
    grid: Grid3,
    c: BoxCoeffs<T>,
) {
    const { assert!(SPAN == ROWS + 2, "a thread's neighbourhood spans its rows and one either side") };
    let Grid3 { nx, ny, nz } = grid;
    let Some(ThreadWork { k_start, j_start, i_start, i_end }) = thread_work(grid, V as u32, ROWS as u32)
    else {
        return;
    };

    let (i_first, i_last) = (i_start.saturating_sub(1), i_end.min(nz - 1));
    let plane = |i: u32| i.clamp(i_first, i_last) as usize * grid.plane_stride();
    let rows: [usize; SPAN] = core::array::from_fn(|y| {
        (j_start as i64 + y as i64 - 1).clamp(0, ny as i64 - 1) as usize * grid.row_stride()
    });
    let (left, right) = ((k_start as usize).saturating_sub(1), (k_start as usize + V).min(nx as usize - 1));
    // SAFETY (loads): every offset lies in the grid; `k_start` is a multiple of `V`, which
    // divides `nx`, so each patch row is `V` aligned elements of one grid row.
    let load = |i: u32, policy: l2::Policy| -> Slab<T, V, SPAN> {
        let at = plane(i);
        unsafe {
            Slab {
                rows: core::array::from_fn(|y| l2::load(input.add(at + rows[y] + k_start as usize), policy)),
                left: core::array::from_fn(|y| *input.add(at + rows[y] + left)),
                right: core::array::from_fn(|y| *input.add(at + rows[y] + right)),
            }
        }
    };
    let interior = |v: u32, n: u32| v.wrapping_sub(1) < n - 2;
    let x_interior: [bool; V] = core::array::from_fn(|e| interior(k_start + e as u32, nx));
    let x_all_interior = x_interior.iter().all(|&inside| inside);
    let y_interior: [bool; ROWS] = core::array::from_fn(|r| interior(j_start + r as u32, ny));
    // Row `r`'s first point in a plane; rows past the grid's last are not stored.
    let here: [usize; ROWS] = core::array::from_fn(|r| rows[r + 1] + k_start as usize);
    let in_grid: [bool; ROWS] = core::array::from_fn(|r| j_start + (r as u32) < ny);

    // What plane `i`'s points still wait on: their `open` sums (the plane below's side term and
    // their own), and the next plane's, in a ring (in phase `p`, slot `p` holds plane `i`'s and
    // the other slot plane `i + 1`'s, so the ring advances by renaming registers: `ring_loop`);
    // and the side terms of plane `i + 1`, which close plane `i`'s sums and open the next ones.
    let policies = RunPolicies::new(i_start, i_end, Walk::FORWARD);
    let open = |below: [[PlaneTerms<T>; V]; ROWS], own: [[PlaneTerms<T>; V]; ROWS]| -> [[T; V]; ROWS] {
        core::array::from_fn(|r| core::array::from_fn(|e| BoxCoeffs::open(below[r][e].side, own[r][e])))
    };
    let [before, first, second] = [
        load(i_start.wrapping_sub(1), policies.unshared).terms(c),
        load(i_start, policies.unshared).terms(c),
        load(i_start + 1, policies.load(i_start + 1)).terms(c),
    ];
    let mut opened: [[[T; V]; ROWS]; 2] = [open(before, first), open(first, second)];
    let mut above = second;
    let mut i = i_start;
    // Plane `i` in phase `$phase`.
    macro_rules! plane {
        ($phase:literal) => {{
            // Opaque, so that later phases' loads are not hoisted into this one.
            let i = opaque(i as i32) as u32;
            // Loaded now, reduced after this plane's points: the loads' latency overlaps them.
            let entering = load(i + 2, policies.load(i + 2));
            // SAFETY: the offset lies in the grid (clamped).
            unsafe { prefetch_l2(input.add(plane(i + 2 + SHAPE_PREFETCH as u32) + here[0])) };
            let z_interior = interior(i, nz);
            let at = i as usize * grid.plane_stride();
            for r in 0..ROWS {
                let row_interior = z_interior && y_interior[r];
                let stencil: [T; V] =
                    core::array::from_fn(|e| BoxCoeffs::close(opened[$phase][r][e], above[r][e]));
                let out = if row_interior && x_all_interior {
                    stencil
                } else {
                    // Boundary points keep their input, which the sums do not hold: the patch
                    // is read again, once.
                    // SAFETY: the patch is in the grid (`i < nz`, row `r` clamped, `k_start +
                    // V ≤ nx`) and aligned as the loads'.
                    let kept: [T; V] = unsafe { load_vector(input.add(at + here[r])) };
                    core::array::from_fn(|e| if row_interior && x_interior[e] { stencil[e] } else { kept[e] })
                };
                if in_grid[r] {
                    // SAFETY: the row is in the grid, so `here[r]` is its unclamped offset.
                    unsafe { l2::store(output.add(at + here[r]), out, policies.written) };
                }
            }
            let entered = entering.terms(c);
            opened[$phase] = open(above, entered);
            above = entered;
        }};
    }
    ring_loop!(plane, i, i_end, 2; 0 1);
}
