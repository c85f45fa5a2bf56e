//! Integration tests of the rating storage: one conformance suite run against
//! SQLite (temp files) and a real PostgreSQL server started for the test.

mod conformance;
