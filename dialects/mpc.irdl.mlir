// The `mpc` dialect: what the three parties compute, step by step, in the rep3 protocol
// (semi-honest ABY3, Appendix C). Every share type carries its ring Z_2^k, chosen by
// `ring-select`; ops of one comparison agree on k (one IRDL constraint variable binds them).
//
// A module holds `func.func @setup() -> !mpc.code<k>...` (inputs loaded once per run) and
// `func.func @query(%query: i64, %gallery...: !mpc.code<k>)` (the work for one query). The
// generated party schedule runs `@setup` once and `@query` for every query, in order.
irdl.dialect @mpc {
  // Replicated shares of a batch of masked iris codes (Section 4.1.1: bit b of code c under mask
  // m is c' = m ? 1 - 2b : 0, shared over Z_2^k), together with their masks in plain.
  irdl.type @code {
    %k = irdl.base "#builtin.integer"
    irdl.parameters(ring_bits: %k)
  }
  // Additive (not replicated) shares over Z_2^k: one per (record, rotation), record-major.
  irdl.type @add {
    %k = irdl.base "#builtin.integer"
    irdl.parameters(ring_bits: %k)
  }
  // Replicated shares over Z_2^k: one per (record, rotation), record-major.
  irdl.type @rep {
    %k = irdl.base "#builtin.integer"
    irdl.parameters(ring_bits: %k)
  }
  // Public values in Z_2^k known to all parties: one per (record, rotation), record-major.
  irdl.type @pub {
    %k = irdl.base "#builtin.integer"
    irdl.parameters(ring_bits: %k)
  }
  // Binary replicated shares (one secret bit per entry, bit-sliced).
  irdl.type @bits {}
  // Bits in the clear at one party after `mpc.open`.
  irdl.type @clear_bits {}

  // Loads this party's shares of the gallery `name` (the parties' input `[C_DB]`, Algorithm 2).
  irdl.operation @load_gallery {
    %s = irdl.base "#builtin.string"
    %l = irdl.base "#builtin.integer"
    irdl.attributes { "name" = %s, "code_bits" = %l }
    %t = irdl.base @mpc::@code
    irdl.results(gallery: %t)
  }

  // Loads this party's shares of query number `query` of input `name` (`[c]`, Algorithm 2),
  // which party `owner` shared.
  irdl.operation @load_query {
    %s = irdl.base "#builtin.string"
    %o = irdl.base "#builtin.integer"
    %l = irdl.base "#builtin.integer"
    irdl.attributes { "name" = %s, "owner" = %o, "code_bits" = %l }
    %i64 = irdl.is i64
    irdl.operands(query: %i64)
    %t = irdl.base @mpc::@code
    irdl.results(code: %t)
  }

  // The rotations lo..=hi of every code, in that order; local (a permutation of shares).
  irdl.operation @rotate {
    %lo = irdl.base "#builtin.integer"
    %hi = irdl.base "#builtin.integer"
    irdl.attributes { "lo" = %lo, "hi" = %hi }
    %k = irdl.any
    %c = irdl.parametric @mpc::@code<%k>
    irdl.operands(code: %c)
    irdl.results(codes: %c)
  }

  // Additive shares of <c', d'> for every (record d, code c): two plain dot products per party,
  // z_i = x'_i . y'_i - x'_{i-1} . y'_{i-1} (Appendix C, eq. 6), before re-randomisation.
  // `code_bits` is the vector length, a compile-time constant of the generated kernel.
  irdl.operation @masked_dot {
    %l = irdl.base "#builtin.integer"
    irdl.attributes { "code_bits" = %l }
    %k = irdl.any
    %c = irdl.parametric @mpc::@code<%k>
    irdl.operands(codes: %c, gallery: %c)
    %a = irdl.parametric @mpc::@add<%k>
    irdl.results(dot: %a)
  }

  // Additive to replicated: adds a fresh sharing of zero and sends the share to the next party
  // (Appendix C: one ring element per entry, one round).
  irdl.operation @reshare {
    %k = irdl.any
    %a = irdl.parametric @mpc::@add<%k>
    irdl.operands(dot: %a)
    %r = irdl.parametric @mpc::@rep<%k>
    irdl.results(shares: %r)
  }

  // ml = popcount(m_c & m_d) for every (record, code): computed locally from the public masks
  // (the `ml` of Algorithm 2).
  irdl.operation @mask_len {
    %k = irdl.any
    %c = irdl.parametric @mpc::@code<%k>
    irdl.operands(codes: %c, gallery: %c)
    %p = irdl.parametric @mpc::@pub<%k>
    irdl.results(mask_len: %p)
  }

  // T - dot with the public threshold T = floor((den - 2 num) * ml / den) (Lemma 1; the
  // argument of MSB in Algorithm 2): negative iff the pair matches. Local.
  irdl.operation @sub_threshold {
    %num = irdl.base "#builtin.integer"
    %den = irdl.base "#builtin.integer"
    irdl.attributes { "ratio_num" = %num, "ratio_den" = %den }
    %k = irdl.any
    %r = irdl.parametric @mpc::@rep<%k>
    %p = irdl.parametric @mpc::@pub<%k>
    irdl.operands(dot: %r, mask_len: %p)
    irdl.results(diff: %r)
  }

  // Binary shares of the most significant bit of every value (BitExtract, Algorithm 10: one
  // full-adder layer, then a ripple-carry adder over k bits).
  irdl.operation @msb {
    %k = irdl.any
    %r = irdl.parametric @mpc::@rep<%k>
    irdl.operands(value: %r)
    %b = irdl.base @mpc::@bits
    irdl.results(bits: %b)
  }

  // OR of groups of bits, as a tree of AND gates on negations (log-depth): group "all" ORs
  // every bit (the `return true` of Algorithms 1 and 2), group "rotations" ORs the `rotations`
  // consecutive bits of each record (one bit per record).
  irdl.operation @or_tree {
    %all = irdl.is "all"
    %rot = irdl.is "rotations"
    %g = irdl.any_of(%all, %rot)
    %n = irdl.base "#builtin.integer"
    irdl.attributes { "group" = %g, "rotations" = %n }
    %b = irdl.base @mpc::@bits
    irdl.operands(bits: %b)
    irdl.results(result: %b)
  }

  // Sends the other parties' missing shares to party `to`, which reconstructs the bits
  // (the final reconstruction of Algorithm 2). The other parties learn nothing.
  irdl.operation @open {
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "to" = %i }
    %b = irdl.base @mpc::@bits
    irdl.operands(bits: %b)
    %c = irdl.base @mpc::@clear_bits
    irdl.results(clear: %c)
  }

  // Prints the result of query number `query` at the output party: shape "any" one bit,
  // "ids" the ids of the records whose bit is set.
  irdl.operation @output {
    %any = irdl.is "any"
    %ids = irdl.is "ids"
    %shape = irdl.any_of(%any, %ids)
    irdl.attributes { "shape" = %shape }
    %i64 = irdl.is i64
    %c = irdl.base @mpc::@clear_bits
    irdl.operands(query: %i64, value: %c)
  }
}
