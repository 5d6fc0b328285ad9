//! Library part of the `tallmc` CLI: CSV parsing shared with the browser bindings.
