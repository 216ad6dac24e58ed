//! Placeholder: the link pipeline moves here from main.rs.
