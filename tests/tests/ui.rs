//! Compile-time behaviour of `#[tool]`, `#[tools]`, `#[prompt]`, `#[resource]` and
//! `#[resource_template]`: every diagnostic the macros emit has a `ui/fail` case (one rule per
//! file, `.stderr` generated with `TRYBUILD=overwrite` and reviewed), and `ui/pass` cases
//! compile and run, checking what the expansion registers.
//!
//! The `.stderr` files are pinned to the project's one toolchain (rustc 1.95): re-bless them
//! with `TRYBUILD=overwrite cargo test -p mcp-tool-tests --test ui` when it changes.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/fail/*.rs");
    t.pass("tests/ui/pass/*.rs");
}
