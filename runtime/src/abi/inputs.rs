//! C ABI entry points that load inputs and report outputs (manifest v2: any number of named
//! inputs of any kind).
