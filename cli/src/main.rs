//! The `tallmc` command-line tool.
fn main() {}
