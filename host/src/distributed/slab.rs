//! The z-slab decomposition of a grid over GPUs (issue 13): which planes each GPU owns, which
//! it holds as halo, and which it sends and receives each step. Pure arithmetic, tested on the
//! CPU.
//!
//! GPU `r` owns the global planes `start..end` (every plane is owned once, slabs in order) and
//! holds `halo` more planes on each side that faces another slab. Its local grid is those
//! planes, so the kernels run on it unchanged: a local face plane is either a face of the whole
//! grid (it keeps its input, as on one GPU) or a halo plane (the kernel leaves it as it was, and
//! the exchange then overwrites it with the neighbour's newly computed plane). Every owned point
//! is therefore computed from the same neighbours by the same formula as on one GPU: the result
//! is bitwise equal.

use std::ops::Range;

use crate::{Error, Result};

/// One GPU's part of the grid, in global planes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slab {
    /// The planes this GPU computes and reports: `start..end`.
    pub start: usize,
    pub end: usize,
    /// Halo planes below `start` (0 for the first slab) and above `end` (0 for the last).
    pub below: usize,
    pub above: usize,
}

impl Slab {
    /// The global planes of the local grid: the owned ones and the halos.
    pub fn local_planes(self) -> Range<usize> {
        self.start - self.below..self.end + self.above
    }

    /// Planes of the local grid.
    pub fn local_depth(self) -> usize {
        self.local_planes().len()
    }

    /// Where the owned planes lie in the local grid.
    pub fn owned_local(self) -> Range<usize> {
        self.below..self.below + (self.end - self.start)
    }

    /// The local planes sent to the slab below (its halo above): this slab's first `below`
    /// owned ones (none for the first slab).
    pub fn send_below(self) -> Range<usize> {
        self.below..self.below + self.below
    }

    /// The local planes sent to the slab above: this slab's last owned ones.
    pub fn send_above(self) -> Range<usize> {
        let end = self.owned_local().end;
        end - self.above..end
    }

    /// The local planes a step computes first when halos are exchanged after it, so that the
    /// exchange overlaps the rest ([`inner`](Self::inner)): the planes sent to each neighbour,
    /// one range per side that has one, merged into one when they meet.
    pub fn edges(self) -> Vec<Range<usize>> {
        let (below, above) = (self.send_below(), self.send_above());
        match (below.is_empty(), above.is_empty()) {
            (false, false) if below.end >= above.start => std::iter::once(below.start..above.end).collect(),
            _ => [below, above].into_iter().filter(|r| !r.is_empty()).collect(),
        }
    }

    /// The local planes a step computes while the halos are exchanged: the owned planes between
    /// the [`edges`](Self::edges) (empty when they meet). The halo planes are computed by
    /// neither: the exchange writes them.
    pub fn inner(self) -> Range<usize> {
        let (below, above) = (self.send_below(), self.send_above());
        if below.end >= above.start { below.end..below.end } else { below.end..above.start }
    }

    /// The local halo planes received from the slab below.
    pub fn receive_below(self) -> Range<usize> {
        0..self.below
    }

    /// The local halo planes received from the slab above.
    pub fn receive_above(self) -> Range<usize> {
        let depth = self.local_depth();
        depth - self.above..depth
    }
}

/// Splits `nz` planes into `parts` slabs with `halo` planes of halo on each inner side (at
/// least the stencil's radius; a deeper halo is exchanged less often), as evenly as whole
/// planes allow (the first `nz mod parts` slabs own one plane more), for a stencil of radius
/// `radius` (1 for the seven-point star and the box, `R` for an order-`R` star). Each slab must
/// own at least `halo` planes (what its neighbours need from it) and its local grid hold at
/// least `2 radius + 1` planes (what the kernels take); `BadShape` says so otherwise.
pub fn split_z(nz: usize, parts: usize, halo: usize, radius: usize) -> Result<Vec<Slab>> {
    if parts == 0 || radius == 0 || halo < radius {
        return Err(Error::BadArgument(format!(
            "a split needs at least one part and a halo of at least the stencil's radius (asked: {parts} parts, halo {halo}, radius {radius})"
        )));
    }
    let thinnest = 2 * radius + 1;
    let (base, extra) = (nz / parts, nz % parts);
    if parts > 1 && base < halo {
        return Err(Error::BadShape(format!(
            "{nz} planes cannot be split over {parts} GPUs with a halo of {halo}: each slab must own at least the {halo} planes its neighbours need; use fewer GPUs or a deeper grid"
        )));
    }
    let mut slabs = Vec::with_capacity(parts);
    let mut start = 0;
    for r in 0..parts {
        let end = start + base + usize::from(r < extra);
        let below = if r == 0 { 0 } else { halo };
        let above = if r + 1 == parts { 0 } else { halo };
        slabs.push(Slab { start, end, below, above });
        start = end;
    }
    if let Some(thin) = slabs.iter().find(|s| s.local_depth() < thinnest) {
        return Err(Error::BadShape(format!(
            "{nz} planes over {parts} GPUs leave a slab of {} planes with its halos ({}..{}), under the {} the kernels take; use fewer GPUs",
            thin.local_depth(),
            thin.start,
            thin.end,
            thinnest
        )));
    }
    Ok(slabs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slabs_own_every_plane_once_in_order() {
        for (nz, parts, halo) in [(1001, 2, 1), (1024, 2, 1), (7, 3, 1), (129, 4, 2), (3, 1, 1), (64, 8, 4)] {
            let slabs = split_z(nz, parts, halo, 1).unwrap();
            assert_eq!(slabs.len(), parts);
            assert_eq!(slabs[0].start, 0);
            assert_eq!(slabs[parts - 1].end, nz);
            for pair in slabs.windows(2) {
                assert_eq!(pair[0].end, pair[1].start, "{nz}/{parts}: contiguous");
            }
            let sizes: Vec<usize> = slabs.iter().map(|s| s.end - s.start).collect();
            assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1, "{sizes:?}: even");
        }
        assert_eq!(
            split_z(1001, 2, 1, 1).unwrap().iter().map(|s| s.end - s.start).collect::<Vec<_>>(),
            [501, 500]
        );
    }

    #[test]
    fn halos_face_other_slabs_only() {
        let slabs = split_z(10, 3, 1, 1).unwrap();
        assert_eq!(slabs[0], Slab { start: 0, end: 4, below: 0, above: 1 });
        assert_eq!(slabs[1], Slab { start: 4, end: 7, below: 1, above: 1 });
        assert_eq!(slabs[2], Slab { start: 7, end: 10, below: 1, above: 0 });
        assert_eq!(slabs[1].local_planes(), 3..8);
        assert_eq!(slabs[1].owned_local(), 1..4);
        let single = split_z(5, 1, 2, 1).unwrap()[0];
        assert_eq!(
            (single.local_planes(), single.receive_below(), single.receive_above()),
            (0..5, 0..0, 5..5)
        );
    }

    #[test]
    fn what_a_slab_sends_is_what_its_neighbour_receives() {
        for (nz, parts, halo) in [(1001, 2, 1), (40, 4, 2), (33, 3, 4), (9, 3, 1)] {
            let slabs = split_z(nz, parts, halo, 1).unwrap();
            let global = |s: Slab, local: Range<usize>| {
                let first = s.local_planes().start;
                local.start + first..local.end + first
            };
            for pair in slabs.windows(2) {
                let (lower, upper) = (pair[0], pair[1]);
                assert_eq!(global(lower, lower.send_above()), global(upper, upper.receive_below()));
                assert_eq!(global(upper, upper.send_below()), global(lower, lower.receive_above()));
                assert_eq!(global(lower, lower.send_above()).len(), halo);
                // What is sent is owned by the sender.
                let owned = |s: Slab, r: Range<usize>| s.start <= r.start && r.end <= s.end;
                assert!(owned(lower, global(lower, lower.send_above())));
                assert!(owned(upper, global(upper, upper.send_below())));
            }
        }
    }

    #[test]
    fn edges_and_inner_planes_cover_the_owned_planes_once() {
        for (nz, parts, halo) in
            [(1001, 2, 4), (40, 4, 2), (33, 3, 4), (9, 3, 1), (7, 2, 3), (16, 4, 4), (5, 1, 2)]
        {
            for slab in split_z(nz, parts, halo, 1).unwrap() {
                let mut covered = vec![0; slab.local_depth()];
                for range in slab.edges().into_iter().chain([slab.inner()]) {
                    covered[range].iter_mut().for_each(|c| *c += 1);
                }
                let owned = slab.owned_local();
                for (plane, &count) in covered.iter().enumerate() {
                    let expected = usize::from(owned.contains(&plane));
                    assert_eq!(count, expected, "{nz}/{parts}/{halo} {slab:?}: local plane {plane}");
                }
                for send in [slab.send_below(), slab.send_above()].into_iter().filter(|s| !s.is_empty()) {
                    assert!(slab.edges().iter().any(|e| e.start <= send.start && send.end <= e.end));
                }
            }
        }
        let middle = split_z(100, 3, 4, 1).unwrap()[1];
        assert_eq!((middle.edges(), middle.inner()), (vec![4..8, 33..37], 8..33));
        let single = split_z(5, 1, 2, 1).unwrap()[0];
        assert_eq!((single.edges(), single.inner()), (vec![], 0..5));
        let thin = split_z(12, 3, 4, 1).unwrap()[1];
        assert_eq!(
            (thin.edges(), thin.inner()),
            (std::iter::once(4..8).collect(), 8..8),
            "edges that meet merge"
        );
    }

    #[test]
    fn too_thin_slabs_are_refused_with_the_reason() {
        let err = split_z(5, 4, 1, 1).unwrap_err();
        assert!(matches!(err, Error::BadShape(_)), "{err}");
        assert!(err.to_string().contains("use fewer GPUs"), "{err}");
        assert!(split_z(12, 4, 4, 1).is_err(), "each slab owns at least its halo");
        assert!(split_z(16, 4, 4, 1).is_ok(), "slabs of 4 planes, halos of 4");
        assert!(split_z(7, 2, 3, 1).is_ok(), "4 + 3 planes with halos of 3: deep enough for radius 1");
        assert!(split_z(16, 4, 4, 4).is_err(), "an end slab of 4 + 4 planes is under the 9 of radius 4");
        assert!(split_z(20, 4, 4, 4).is_ok());
        assert!(matches!(split_z(10, 0, 1, 1), Err(Error::BadArgument(_))));
        assert!(matches!(split_z(10, 2, 1, 2), Err(Error::BadArgument(_))), "a halo under the radius");
        assert!(split_z(2, 1, 1, 1).is_err(), "one GPU still needs 2 radius + 1 planes");
        assert!(
            split_z(3, 2, 1, 1).is_err() && split_z(4, 2, 1, 1).is_ok(),
            "slabs of 2 + 2 planes hold 3 each"
        );
    }
}
