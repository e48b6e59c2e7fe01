//! Helpers shared by the integration tests (`mod support;`).

pub mod netlab;
