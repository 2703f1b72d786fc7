//! End-to-end tests: the real `irisc` builds real executables, and three OS processes run them
//! over mutually authenticated TLS on loopback. Answers are compared with the plaintext
//! definition (Algorithm 1 with rotations).

mod accounting;
mod bad_input;
mod batch;
mod beaver;
mod beaver_programs;
mod common;
mod data;
mod fss2;
mod kill;
mod language;
mod matching;
mod mirror;
mod nests;
mod outputs;
mod party;
mod ratio_edges;
mod reference;
mod rotation;
mod serve;
mod store;
mod tiling;
