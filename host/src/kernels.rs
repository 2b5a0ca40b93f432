//! Every kernel entry point the host launches, with the launch-sized shared memory it gets
//! (the PTX declares it `.extern .shared`, so `ptxas` cannot report it).

use crate::element::Precision;
use crate::merge::{MergeVariant, VALUE_BYTES, by_key, path};
use crate::stencil::{StencilVariant, high_order, streaming, temporal};

/// `(entry point, dynamic shared-memory bytes per block)` for every launched kernel: the
/// book's stencils at every tile edge of their sweep, every streaming stencil kernel (no
/// shared memory) of every shape, every temporal one, the book's merges on every key type at
/// every coarsening factor of theirs, and merge path's partition and every built shape, and its
/// merge by key with every value size.
pub fn entry_points() -> Vec<(String, usize)> {
    let mut entries = Vec::new();
    for variant in StencilVariant::ALL {
        for &tile in variant.tiles() {
            for precision in Precision::ALL {
                // The stencils' shared memory does not depend on the grid.
                let probe = gpu_kernels::stencil::Grid3 { nx: 3, ny: 3, nz: 3 };
                let config =
                    variant.launch_config_with_tile(probe, precision, tile).expect("a 3³ grid launches");
                let entry = variant.entry_point_with_tile(precision, tile).expect("tile of the variant");
                entries.push((entry, config.shared_mem_bytes as usize));
            }
        }
    }
    for precision in Precision::ALL {
        for &kernel in streaming::kernels(precision) {
            let entry =
                streaming::entry_point(streaming::shape_of(kernel), precision).expect("a built kernel");
            entries.push((entry, 0));
        }
        for (shape, card) in high_order::tables() {
            for launch in high_order::sweep(shape, precision, card).expect("a high-order star or the box") {
                entries.push((high_order::entry_point(shape, launch, precision).expect("a built kernel"), 0));
            }
        }
        for order in [2, 4] {
            let probe = gpu_kernels::stencil::Grid3 { nx: 9, ny: 9, nz: 9 };
            let (entry, config) =
                high_order::star_tiled_launch(order, probe, precision).expect("orders 2 and 4");
            entries.push((entry, config.shared_mem_bytes as usize));
        }
        for &shape in temporal::sweep(precision) {
            let entry = temporal::entry_point(shape, precision).expect("a built kernel");
            entries
                .push((entry, temporal::shared_bytes(shape, precision).expect("the built shapes are valid")));
        }
    }
    // A temporal kernel's shared memory grows with the warps of its shapes: keep the largest.
    entries.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    entries.dedup_by(|later, first| later.0 == first.0);
    for variant in MergeVariant::ALL {
        for (dtype, bytes) in MergeVariant::KEY_TYPES {
            for &factor in variant.coarsenings(dtype) {
                // Nor does the merges' (a merge of 1 + 1 keys launches one block).
                let plan =
                    variant.plan_with_coarsening(1, 1, bytes, factor).expect("a factor of the variant");
                let entry =
                    variant.entry_point_with_coarsening(dtype, factor).expect("a factor of the variant");
                entries.push((entry, plan.shared_mem_bytes));
            }
        }
    }
    for (dtype, bytes) in MergeVariant::KEY_TYPES {
        entries.push((path::samples_entry_point(dtype), 0));
        entries.push((path::partition_entry_point(dtype), 0));
        for &shape in path::shapes(dtype) {
            let entry = path::entry_point(shape, dtype).expect("a built shape");
            entries.push((entry, shape.shared_bytes(bytes)));
        }
        for &shape in by_key::shapes(dtype) {
            for value_bytes in VALUE_BYTES {
                let entry = by_key::entry_point(shape, dtype, value_bytes).expect("a built shape");
                entries.push((entry, shape.shared_bytes(bytes)));
            }
        }
        // The other key orders, at the default shape.
        let shape = path::default_shape(dtype);
        for order in path::ORDERS.into_iter().filter(|o| path::ordered_key_types(o).contains(&dtype)) {
            entries.push((path::partition_entry_point_in(dtype, order), 0));
            entries.push((
                path::entry_point_in(shape, dtype, order).expect("a built order"),
                shape.shared_bytes(bytes),
            ));
            for value_bytes in VALUE_BYTES {
                let entry = by_key::entry_point_in(shape, dtype, order, value_bytes).expect("a built order");
                entries.push((entry, shape.shared_bytes(bytes)));
            }
        }
    }
    entries
}
