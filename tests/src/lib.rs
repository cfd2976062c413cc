//! Integration and UI tests of mcp-tool live in `tests/`: protocol round trips through the in-process client, start-time checks, and trybuild cases for every macro diagnostic.
