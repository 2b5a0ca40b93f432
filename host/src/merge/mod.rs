//! The ordered merge on the host.
