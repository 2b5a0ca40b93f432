//! The ordered merge (PMPP chapter 12).
