//! C ABI entry points for the protocol steps of the whole language: lifts, bit injection,
//! boolean logic and multiplexers, products, Shamir dot products and F_p comparisons.
