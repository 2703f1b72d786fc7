// The `mpc` dialect: what the three parties compute, step by step (semi-honest rep3 / ABY3,
// Appendix C of the Large-Scale MPC paper, with the Shamir dot products of Section 4.3.2).
// Every share type carries its ring: Z_2^k for `code`/`add`/`rep`/`pub`, F_p (p = 65519) for
// `add_p`/`rep_p`, Z_(p*2^m) for `rep_mod<m>`; binary shares are `bits`.
//
// A module holds `func.func @setup() -> (...)` (gallery inputs, loaded once per run) and
// `func.func @query(%query: i64, %gallery...)` (the work for one query). The generated party
// schedule runs `@setup` once and `@query` for every query, in order; every op is one call into
// the runtime. Length-1 operands of elementwise ops are broadcast.
//
// After `mpc-tile`, `@query` is the tiled schedule (see the ops at the end): its body is split
// into stages by `mpc.stage`, dot products with a gallery run for a whole batch of queries over
// one chunk of records (`batch_masked_dot`, `batch_shamir_dot`), record-local ops read the
// chunk's `gallery_view`, and what the finish stage reads from the chunks is `append`ed.
irdl.dialect @mpc {
  // Replicated shares of iris codes as masked bitvectors (Section 4.1.1: bit b under mask m is
  // m ? 1 - 2b : 0), of secret mask bits (Section 5), or of fixed-point vectors, over Z_2^k;
  // public masks travel with them.
  irdl.type @code {
    %k = irdl.base "#builtin.integer"
    irdl.parameters(ring_bits: %k)
  }
  // Degree-1 Shamir shares of codes: "fp" over F_p, "gr2"/"gr4" over GR(2^16, d) (one
  // component per party).
  irdl.type @shamir {
    %s = irdl.base "#builtin.string"
    irdl.parameters(sharing: %s)
  }
  // Additive shares over Z_2^k (3-out-of-3; 2-out-of-2 between the `fss2` servers), one per
  // (record, code), record-major.
  irdl.type @add {
    %k = irdl.base "#builtin.integer"
    irdl.parameters(ring_bits: %k)
  }
  // Replicated shares over Z_2^k.
  irdl.type @rep {
    %k = irdl.base "#builtin.integer"
    irdl.parameters(ring_bits: %k)
  }
  // Public values in Z_2^k known to all parties (combined mask lengths).
  irdl.type @pub {
    %k = irdl.base "#builtin.integer"
    irdl.parameters(ring_bits: %k)
  }
  // Additive and replicated shares over F_p, p = 2^16 - 17.
  irdl.type @add_p {}
  irdl.type @rep_p {}
  // Replicated shares over Z_t, t = p * 2^m (the target of LiftP, Algorithm 15).
  irdl.type @rep_mod {
    %m = irdl.base "#builtin.integer"
    irdl.parameters(lift_bits: %m)
  }
  // Binary replicated shares (bit-sliced).
  irdl.type @bits {}
  // XOR shares of rows of bits, one column per lane (the `beaver` family: paper 004).
  irdl.type @xor {}
  // Values in the clear at one party after an open (bits or integers).
  irdl.type @clear_bits {}
  irdl.type @clear_ints {}

  // This party's shares of gallery input number `input` (`name`): `part` 0 codes, 1 secret
  // masks, 2 embeddings, 3 bits; reduced locally to the ring of the result type. Under `fss2`
  // the enrolled templates in the optimised form (`!mpc.masked`), as the dealer dealt them.
  irdl.operation @load_gallery {
    %s = irdl.base "#builtin.string"
    %i = irdl.base "#builtin.integer"
    %i_input = irdl.base "#builtin.integer"
    %i_part = irdl.base "#builtin.integer"
    irdl.attributes { "name" = %s, "input" = %i_input, "part" = %i_part }
    %c = irdl.base @mpc::@code
    %sh = irdl.base @mpc::@shamir
    %b = irdl.base @mpc::@bits
    %m = irdl.base @mpc::@masked
    %r = irdl.any_of(%c, %sh, %b, %m)
    irdl.results(gallery: %r)
  }

  // This party's shares of query number `query` of query input `input` (shared by `owner`):
  // `part` as for `load_gallery`, or 4, the conjugate of the code that its owner dealt.
  irdl.operation @load_query {
    %s = irdl.base "#builtin.string"
    %i = irdl.base "#builtin.integer"
    %i_input = irdl.base "#builtin.integer"
    %i_part = irdl.base "#builtin.integer"
    irdl.attributes { "name" = %s, "input" = %i_input, "part" = %i_part }
    %i64 = irdl.is i64
    irdl.operands(query: %i64)
    %c = irdl.base @mpc::@code
    %sh = irdl.base @mpc::@shamir
    %b = irdl.base @mpc::@bits
    %r = irdl.any_of(%c, %sh, %b)
    irdl.results(value: %r)
  }

  // The queries before query number `query` of input `input`, as records (intra-batch
  // uniqueness); empty for the first query.
  irdl.operation @load_earlier {
    %s = irdl.base "#builtin.string"
    %i = irdl.base "#builtin.integer"
    %i_input = irdl.base "#builtin.integer"
    %i_part = irdl.base "#builtin.integer"
    irdl.attributes { "name" = %s, "input" = %i_input, "part" = %i_part }
    %i64 = irdl.is i64
    irdl.operands(query: %i64)
    %c = irdl.base @mpc::@code
    %b = irdl.base @mpc::@bits
    %r = irdl.any_of(%c, %b)
    irdl.results(records: %r)
  }

  // The rotations lo..=hi of every code, in that order; local (a permutation of shares). With
  // `mirror = 1`, of the codes' mirror images: also local (the imaginary entries' shares are
  // negated), for replicated and F_p Shamir codes only. With `mirror = 2`, mirror images by
  // positions only, under every sharing: of a secret mask, and under a Galois ring of a
  // query's conjugate (`load_query` part 4, dealt by its owner: a GR share holds a whole cell).
  irdl.operation @rotate {
    %lo = irdl.base "#builtin.integer"
    %hi = irdl.base "#builtin.integer"
    irdl.attributes { "lo" = %lo, "hi" = %hi }
    %c = irdl.base @mpc::@code
    %sh = irdl.base @mpc::@shamir
    %t = irdl.any_of(%c, %sh)
    irdl.operands(code: %t)
    irdl.results(codes: %t)
  }

  // Additive shares of <x, y> for every (record y, code x): z_i = x'_i . y'_i - x'_{i-1} .
  // y'_{i-1} (Appendix C, eq. 6), the generated kernel; `code_bits` is the vector length.
  irdl.operation @masked_dot {
    %l = irdl.base "#builtin.integer"
    irdl.attributes { "code_bits" = %l }
    %k = irdl.any
    %c = irdl.parametric @mpc::@code<%k>
    irdl.operands(codes: %c, gallery: %c)
    %a = irdl.parametric @mpc::@add<%k>
    irdl.results(dot: %a)
  }

  // Additive shares of <y, y> for every record y (the norms of the cosine test).
  irdl.operation @self_dot {
    %k = irdl.any
    %c = irdl.parametric @mpc::@code<%k>
    irdl.operands(codes: %c)
    %a = irdl.parametric @mpc::@add<%k>
    irdl.results(dot: %a)
  }

  // Dot products of Shamir shares: the Lagrange coefficient is folded into the query, so each
  // party computes one plain dot product and holds an additive share (Section 4.3.2): over
  // Z_2^16 for Galois rings, mod p for F_p.
  irdl.operation @shamir_dot {
    %sh = irdl.base @mpc::@shamir
    irdl.operands(codes: %sh, gallery: %sh)
    %a = irdl.base @mpc::@add
    %ap = irdl.base @mpc::@add_p
    %r = irdl.any_of(%a, %ap)
    irdl.results(dot: %r)
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
  irdl.operation @reshare_p {
    %a = irdl.base @mpc::@add_p
    irdl.operands(dot: %a)
    %r = irdl.base @mpc::@rep_p
    irdl.results(shares: %r)
  }

  // ml = popcount(m_c & m_d) for every (record, code), from the public masks (Algorithm 2).
  // Optional, written by `threshold-placement`: `computed_by = "record_thirds"` with
  // `holders = 1|2`: only the parties holding share component c compute the mask lengths of the
  // c-th third of the records (`holders` parties per component, from party c), the others
  // only which records have an empty mask; threshold ops with `threshold_by = "record_thirds"`
  // alone may read it. Absent (or "every_party"): every party computes every mask length.
  irdl.operation @mask_len {
    %c = irdl.base @mpc::@code
    %sh = irdl.base @mpc::@shamir
    %t = irdl.any_of(%c, %sh)
    irdl.operands(codes: %t, gallery: %t)
    %p = irdl.base @mpc::@pub
    irdl.results(mask_len: %p)
  }

  // T - dot with the public threshold T = floor((den - 2 num) * ml / den) (Lemma 1): negative
  // iff the pair matches. Local, on replicated or on additive shares (the result is of the
  // operand's kind: share component 0 adds T). `_p`: the same mod p. Optional
  // `threshold_by = "record_thirds"` (written by `threshold-placement`): component c adds T on
  // the c-th third of the records, and a record with an empty public mask compares 0.
  irdl.operation @sub_threshold {
    %i = irdl.base "#builtin.integer"
    %i_ratio_num = irdl.base "#builtin.integer"
    %i_ratio_den = irdl.base "#builtin.integer"
    irdl.attributes { "ratio_num" = %i_ratio_num, "ratio_den" = %i_ratio_den }
    %k = irdl.any
    %r = irdl.parametric @mpc::@rep<%k>
    %a = irdl.parametric @mpc::@add<%k>
    %s = irdl.any_of(%r, %a)
    %p = irdl.parametric @mpc::@pub<%k>
    irdl.operands(dot: %s, mask_len: %p)
    irdl.results(diff: %s)
  }
  irdl.operation @sub_threshold_p {
    %i = irdl.base "#builtin.integer"
    %i_ratio_num = irdl.base "#builtin.integer"
    %i_ratio_den = irdl.base "#builtin.integer"
    irdl.attributes { "ratio_num" = %i_ratio_num, "ratio_den" = %i_ratio_den }
    %r = irdl.base @mpc::@rep_p
    %p = irdl.base @mpc::@pub
    irdl.operands(dot: %r, mask_len: %p)
    irdl.results(diff: %r)
  }

  // a * x - b * y, local (the argument of MSB in Algorithm 3: a*ml - b*dot).
  irdl.operation @lin {
    %i = irdl.base "#builtin.integer"
    %i_a = irdl.base "#builtin.integer"
    %i_b = irdl.base "#builtin.integer"
    irdl.attributes { "a" = %i_a, "b" = %i_b }
    %k = irdl.any
    %r = irdl.parametric @mpc::@rep<%k>
    irdl.operands(x: %r, y: %r)
    irdl.results(r: %r)
  }

  // ConstLift (Algorithm 13): [x] over Z_2^(k-m) -> [2^m x] over Z_2^k, local.
  irdl.operation @const_lift {
    %m = irdl.base "#builtin.integer"
    irdl.attributes { "lift_bits" = %m }
    %x = irdl.base @mpc::@rep
    irdl.operands(x: %x)
    %r = irdl.base @mpc::@rep
    irdl.results(r: %r)
  }

  // Lift (Algorithm 14, MPCLift): [x] over Z_2^k -> [x] over Z_2^k' (bit extraction of the two
  // overflow bits, bit injection, local correction).
  irdl.operation @lift {
    %x = irdl.base @mpc::@rep
    irdl.operands(x: %x)
    %r = irdl.base @mpc::@rep
    irdl.results(r: %r)
  }

  // Elementwise products of replicated shares: additive shares (ABY3 multiplication), then
  // `reshare`.
  irdl.operation @mul {
    %k = irdl.any
    %r = irdl.parametric @mpc::@rep<%k>
    irdl.operands(x: %r, y: %r)
    %a = irdl.parametric @mpc::@add<%k>
    irdl.results(r: %a)
  }

  // Binary shares of the most significant bit (BitExtract, Algorithm 10: one full-adder layer,
  // then a ripple-carry adder over k bits).
  irdl.operation @msb {
    %r = irdl.base @mpc::@rep
    irdl.operands(value: %r)
    %b = irdl.base @mpc::@bits
    irdl.results(bits: %b)
  }

  // Binary shares of the most significant bit of additive shares (AdditiveMSB: two private
  // binary inputs, then one ripple-carry adder over k bits; no reshare).
  irdl.operation @additive_msb {
    %a = irdl.base @mpc::@add
    irdl.operands(value: %a)
    %b = irdl.base @mpc::@bits
    irdl.results(bits: %b)
  }

  // F_p: the MSB of the representative in [0, p) (BitExtractP, Algorithm 12).
  irdl.operation @msb_p {
    %r = irdl.base @mpc::@rep_p
    irdl.operands(value: %r)
    %b = irdl.base @mpc::@bits
    irdl.results(bits: %b)
  }

  // LiftP (Algorithm 15): [x] mod p -> [x] mod p * 2^m.
  irdl.operation @lift_p {
    %r = irdl.base @mpc::@rep_p
    irdl.operands(x: %r)
    %t = irdl.base @mpc::@rep_mod
    irdl.results(r: %t)
  }

  // ConstLift over F_p (Algorithm 13): [x] mod p -> [2^m x] mod p * 2^m, local.
  irdl.operation @const_lift_p {
    %r = irdl.base @mpc::@rep_p
    irdl.operands(x: %r)
    %t = irdl.base @mpc::@rep_mod
    irdl.results(r: %t)
  }

  // a * x - b * y mod p * 2^m, local.
  irdl.operation @lin_mod {
    %i = irdl.base "#builtin.integer"
    %i_a = irdl.base "#builtin.integer"
    %i_b = irdl.base "#builtin.integer"
    irdl.attributes { "a" = %i_a, "b" = %i_b }
    %m = irdl.any
    %t = irdl.parametric @mpc::@rep_mod<%m>
    irdl.operands(x: %t, y: %t)
    irdl.results(r: %t)
  }

  // The comparison bit of Lemma 2 over Z_t, t = p * 2^m: set iff the representative is at least
  // 2^(ceil(log2 t) - 1).
  irdl.operation @msb_mod {
    %t = irdl.base @mpc::@rep_mod
    irdl.operands(value: %t)
    %b = irdl.base @mpc::@bits
    irdl.results(bits: %b)
  }

  // A public constant bit, shared trivially.
  irdl.operation @const_bits {
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "value" = %i }
    %b = irdl.base @mpc::@bits
    irdl.results(bits: %b)
  }

  // NOT (local), AND (one AND gate: one round, ABY3), OR (x ^ y ^ xy: one AND gate) of binary
  // shares.
  irdl.operation @not {
    %b = irdl.base @mpc::@bits
    irdl.operands(x: %b)
    irdl.results(r: %b)
  }
  irdl.operation @and {
    %b = irdl.base @mpc::@bits
    irdl.operands(x: %b, y: %b)
    irdl.results(r: %b)
  }
  irdl.operation @or {
    %b = irdl.base @mpc::@bits
    irdl.operands(x: %b, y: %b)
    irdl.results(r: %b)
  }

  // CMux (Algorithm 11): cond ? x : y = y ^ (cond & (x ^ y)), one AND gate per output bit.
  irdl.operation @mux {
    %b = irdl.base @mpc::@bits
    irdl.operands(cond: %b, x: %b, y: %b)
    irdl.results(r: %b)
  }

  // ---- The `beaver` family (paper 004, `--protocol beaver`) ----
  // The local conversion to XOR shares, `group` consecutive elements per lane (one lane per
  // record): replicated Z_2^k shares give each element's three summands' bits (party i keeps
  // its own summand x_i, the others' shares of it are 0); binary shares give each party's b_i.
  irdl.operation @to_xor {
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "group" = %i }
    %r = irdl.base @mpc::@rep
    %b = irdl.base @mpc::@bits
    %v = irdl.any_of(%r, %b)
    irdl.operands(value: %v)
    %x = irdl.base @mpc::@xor
    irdl.results(rows: %x)
  }
  // The rows of `a`, then of `b`; a one-lane operand (a query's bit) is broadcast to all lanes.
  irdl.operation @xor_concat {
    %x = irdl.base @mpc::@xor
    irdl.operands(a: %x, b: %x)
    irdl.results(rows: %x)
  }
  // Pi_MT (Fig. 4) of the reveals' circuit (`circuit`: its encoding, hex) on the rows of
  // `rows` named by `inputs` ("a..b" rows, "r" a row, "c0"/"c1" constants), one execution of
  // the party's preprocessing store per call; the result is the XOR-shared outputs.
  // `triples` (AND gates on the longest path, per lane), `naive_triples` and `conditionals`
  // say what it consumes; `lanes_input` names the gallery input whose records are the lanes.
  irdl.operation @beaver_eval {
    %s = irdl.base "#builtin.string"
    %t = irdl.base "#builtin.string"
    irdl.attributes { "circuit" = %s, "inputs" = %t }
    %x = irdl.base @mpc::@xor
    irdl.operands(rows: %x)
    irdl.results(outputs: %x)
  }
  // Rows `first` .. `first + width` of XOR-shared outputs as binary replicated shares, lane-major
  // (one round: each party re-randomises its XOR share and sends it to the next), for the
  // honest-majority ops after the circuit (reductions across records, counts).
  irdl.operation @xor_to_bits {
    %i = irdl.base "#builtin.integer"
    %j = irdl.base "#builtin.integer"
    irdl.attributes { "first" = %i, "width" = %j }
    %x = irdl.base @mpc::@xor
    irdl.operands(outputs: %x)
    %b = irdl.base @mpc::@bits
    irdl.results(bits: %b)
  }
  // Output `row` of XOR-shared outputs opened to party `to` (one round).
  irdl.operation @beaver_open {
    %i = irdl.base "#builtin.integer"
    %j = irdl.base "#builtin.integer"
    irdl.attributes { "row" = %i, "to" = %j }
    %x = irdl.base @mpc::@xor
    irdl.operands(outputs: %x)
    %c = irdl.base @mpc::@clear_bits
    irdl.results(bits: %c)
  }

  // OR / AND of consecutive groups of `group` bits (0: all), as a balanced tree of AND gates
  // (ceil(log2 group) rounds; Section 4.2, "Accumulating the Resulting Bits").
  irdl.operation @or_tree {
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "group" = %i }
    %b = irdl.base @mpc::@bits
    irdl.operands(bits: %b)
    irdl.results(result: %b)
  }
  irdl.operation @and_tree {
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "group" = %i }
    %b = irdl.base @mpc::@bits
    irdl.operands(bits: %b)
    irdl.results(result: %b)
  }

  // BitInject (Algorithms 16 and 17, 3-party OT): binary shares -> replicated shares over Z_2^k.
  irdl.operation @bit_inject {
    %b = irdl.base @mpc::@bits
    irdl.operands(bits: %b)
    %r = irdl.base @mpc::@rep
    irdl.results(r: %r)
  }

  // Sum of consecutive groups of `group` values (0: all), local.
  irdl.operation @sum {
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "group" = %i }
    %k = irdl.any
    %r = irdl.parametric @mpc::@rep<%k>
    irdl.operands(x: %r)
    irdl.results(r: %r)
  }

  // Sends party `to` the component it lacks; it reconstructs the values. The other parties
  // learn nothing.
  irdl.operation @open {
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "to" = %i }
    %b = irdl.base @mpc::@bits
    irdl.operands(bits: %b)
    %c = irdl.base @mpc::@clear_bits
    irdl.results(clear: %c)
  }
  irdl.operation @open_int {
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "to" = %i }
    %r = irdl.base @mpc::@rep
    irdl.operands(x: %r)
    %c = irdl.base @mpc::@clear_ints
    irdl.results(clear: %c)
  }

  // Records an output field of query number `query` at the output party: shape "bit", "ids"
  // (the ids of the `records` whose opened bit is set) or "count"; printed by `mpc.emit`.
  irdl.operation @output {
    %s = irdl.base "#builtin.string"
    %bit = irdl.is "bit"
    %ids = irdl.is "ids"
    %cnt = irdl.is "count"
    %shape = irdl.any_of(%bit, %ids, %cnt)
    irdl.attributes { "shape" = %shape, "label" = %s }
    %i64 = irdl.is i64
    %cb = irdl.base @mpc::@clear_bits
    %ci = irdl.base @mpc::@clear_ints
    %v = irdl.any_of(%cb, %ci)
    %rec = irdl.any
    irdl.operands(query: %i64, value: %v, records: variadic %rec)
  }

  // Prints the output party's JSON object for query number `query`.
  irdl.operation @emit {
    %i64 = irdl.is i64
    irdl.operands(query: %i64)
  }

  // ---- The tiled schedule (written by `mpc-tile`) ----

  // Opens a stage of the tiled `@query`: the ops after it, up to the next `stage`, run there.
  // "query": once per query of the batch (query-only work, e.g. loads and rotations);
  // "batch_dot": once per chunk of records, for the whole batch of queries;
  // "chunk": per chunk, per query (record-local work on the chunk); with `mpc.batched_chunks`
  // on `@query`, once per chunk for the whole batch, over the batch layout
  // [record][query][width] (`mpc.unbatched` says why a body keeps the per-query loop);
  // "batch_finish" (batched only): once per batch after the last chunk (openings and the
  // reductions over all records finished over the chunks' results);
  // "finish": once per query after the last chunk (openings, outputs, and the reductions over
  // all records finished over the chunks' results).
  irdl.operation @stage {
    %q = irdl.is "query"
    %d = irdl.is "batch_dot"
    %c = irdl.is "chunk"
    %bf = irdl.is "batch_finish"
    %f = irdl.is "finish"
    %n = irdl.any_of(%q, %d, %c, %bf, %f)
    irdl.attributes { "name" = %n }
  }

  // `masked_dot` of every query of the batch (`codes`, held per query) with the current chunk of
  // `gallery`, in one kernel call (a GEMM over (queries x rotations) x records, so the chunk
  // streams from memory once per batch); the result is held per query. The runtime starts the
  // next chunk's products in the background while this chunk's comparisons run.
  irdl.operation @batch_masked_dot {
    %l = irdl.base "#builtin.integer"
    irdl.attributes { "code_bits" = %l }
    %k = irdl.any
    %c = irdl.parametric @mpc::@code<%k>
    irdl.operands(codes: %c, gallery: %c)
    %a = irdl.parametric @mpc::@add<%k>
    irdl.results(dot: %a)
  }

  // `shamir_dot` of every query of the batch with the current chunk of `gallery`, in one call
  // (as `batch_masked_dot`).
  irdl.operation @batch_shamir_dot {
    %sh = irdl.base @mpc::@shamir
    irdl.operands(codes: %sh, gallery: %sh)
    %a = irdl.base @mpc::@add
    %ap = irdl.base @mpc::@add_p
    %r = irdl.any_of(%a, %ap)
    irdl.results(dot: %r)
  }

  // The current chunk of records of `gallery` (`--record-chunk` records; all of them with 0):
  // what record-local ops of the chunk stage read. `shares` = 0 where only the records' ids and
  // public masks are read (mask_len), 1 where their shares are too.
  irdl.operation @gallery_view {
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "shares" = %i }
    %c = irdl.base @mpc::@code
    %sh = irdl.base @mpc::@shamir
    %b = irdl.base @mpc::@bits
    %g = irdl.any_of(%c, %sh, %b)
    irdl.operands(gallery: %g)
    irdl.results(view: %g)
  }

  // A chunk-stage value the finish stage reads (a crossing), collected chunk after chunk (the
  // first chunk starts the collection): after the last chunk it is the record-major value the
  // untiled program computes. Local; nothing is opened per chunk.
  irdl.operation @append {
    %t = irdl.any
    irdl.operands(chunk: %t)
    irdl.results(all: %t)
  }

  // ---- The batched chunk stage (written by `mpc-tile` with `mpc.batched_chunks`) ----
  // A batch value holds the values of the batch's n queries as one vector, record-major:
  // [record][query][width] (the batch dot product's own output, not split per query).

  // `mask_len` of every query of the batch (`codes`, held per query) with the chunk of
  // `gallery`, in the batch layout (width: the codes per query). Placed as `mask_len`
  // (`computed_by`, `holders`).
  irdl.operation @batch_mask_len {
    %t = irdl.any
    irdl.operands(codes: %t, gallery: %t)
    %p = irdl.base @mpc::@pub
    irdl.results(mask_len: %p)
  }

  // The per-query values `x` (held per query: one element each, or `width`) broadcast into
  // the batch layout of `like` (`width` values per record and query). Local.
  irdl.operation @batch_spread {
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "width" = %i }
    %t = irdl.any
    %l = irdl.any
    irdl.operands(x: %t, like: %l)
    irdl.results(batch: %t)
  }

  // A value of the gallery alone (`width` values per record, the same for every query)
  // repeated for every query of the batch: [record][query][width]. Local.
  irdl.operation @batch_repeat {
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "width" = %i }
    %t = irdl.any
    irdl.operands(x: %t)
    irdl.results(batch: %t)
  }

  // The current query's part of a batch value (`width` values per record): what the
  // per-query schedule would hold, for the per-query finish (outputs). Local.
  irdl.operation @batch_pick {
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "width" = %i }
    %t = irdl.any
    irdl.operands(batch: %t)
    irdl.results(query: %t)
  }

  // ---- The two-server family `fss2` (paper 002) ----
  //
  // A module of this family has `mpc.protocol = "fss2"`, `mpc.parties = 2` (the servers S_0,
  // S_1 at the link indices `mpc.servers`), the client `mpc.client` (who supplies the query and
  // receives the decisions), the ring `mpc.ring_bits` (l0 = 64) and truncation
  // `mpc.truncation_bits`, and with `--malicious M` `mpc.malicious = M` and `mpc.mac_bits`
  // (l1 = 48): every share below is then authenticated (SPDZ2k-style, Z_2^(l0+l1)) and each gate
  // runs with M normal/trap instances (CSB.Eval*, Section 4.3). The dealer's role is offline:
  // the masks, FSS keys and products each op below consumes are its material (Protocol 1). The
  // servers' schedule is Protocol 2's: the ops up to the first `ss_open` run before round 1,
  // `ic_gate`, `ss_mul` and `ss_lin` between the rounds, `condeval` is round 2.

  // The optimised additive sharing <x> = (delta_x, [r_x]) over Z_2^k (Section 3.1): delta_x
  // public to both servers, r_x the dealer's mask, shared additively.
  irdl.type @masked {
    %k = irdl.base "#builtin.integer"
    irdl.parameters(ring_bits: %k)
  }

  // Fig. 3's robust input: the client (`from`) masks query number `query` of input `input`
  // (fixed point at `scale_bits`) with r_x, whose share each server sent it ahead as a seed, and
  // sends delta_x = x + r_x to both servers; the servers check in round 1 that they received
  // the same delta_x.
  irdl.operation @masked_input {
    %s = irdl.base "#builtin.string"
    %i_input = irdl.base "#builtin.integer"
    %i_from = irdl.base "#builtin.integer"
    %i_scale = irdl.base "#builtin.integer"
    irdl.attributes { "name" = %s, "input" = %i_input, "from" = %i_from, "scale_bits" = %i_scale }
    %i64 = irdl.is i64
    irdl.operands(query: %i64)
    %m = irdl.base @mpc::@masked
    irdl.results(x: %m)
  }

  // SS.IP (Section 3.1): each server's additive share of <x, y> over vectors of `dim` words,
  // b * sum dx dy - sum (dx [r_y]_b + dy [r_x]_b) + [sum r_x r_y]_b, one per record of a gallery
  // operand; local. The generated kernel (`irisc_fss2_ss_ip`).
  irdl.operation @ss_ip {
    %l = irdl.base "#builtin.integer"
    irdl.attributes { "dim" = %l }
    %k = irdl.any
    %m = irdl.parametric @mpc::@masked<%k>
    irdl.operands(x: %m, y: %m)
    %a = irdl.parametric @mpc::@add<%k>
    irdl.results(ip: %a)
  }

  // Opens [v] + r (r the dealer's output mask) between the two servers in online round `round`:
  // the value back in the optimised form (delta_v public, [r] shared).
  irdl.operation @ss_open {
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "round" = %i }
    %k = irdl.any
    %a = irdl.parametric @mpc::@add<%k>
    irdl.operands(x: %a)
    %m = irdl.parametric @mpc::@masked<%k>
    irdl.results(opened: %m)
  }

  // An interval-containment FSS gate (Boyle et al., Fig. 3, over the DCF of Fig. 1) evaluated on
  // an opened value (or its negation, `negate`): XOR shares of [v in interval], where
  // "non_negative" is [0, 2^(k-1)) and "negative" [2^(k-1), 2^k); local (`c_1` of Protocol 2).
  irdl.operation @ic_gate {
    %nn = irdl.is "non_negative"
    %ng = irdl.is "negative"
    %iv = irdl.any_of(%nn, %ng)
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "interval" = %iv, "negate" = %i }
    %k = irdl.any
    %m = irdl.parametric @mpc::@masked<%k>
    irdl.operands(x: %m)
    %x = irdl.base @mpc::@xor
    irdl.results(bit: %x)
  }

  // SS.MUL (Eq. 4): an additive share of x * y from the optimised forms and the dealer's
  // [r_x r_y]; local.
  irdl.operation @ss_mul {
    %k = irdl.any
    %m = irdl.parametric @mpc::@masked<%k>
    irdl.operands(x: %m, y: %m)
    %a = irdl.parametric @mpc::@add<%k>
    irdl.results(product: %a)
  }

  // a * x - b * y on additive shares, local (E = den^2 p^2 - num^2 <x,x><y,y>).
  irdl.operation @ss_lin {
    %i_a = irdl.base "#builtin.integer"
    %i_b = irdl.base "#builtin.integer"
    irdl.attributes { "a" = %i_a, "b" = %i_b }
    %k = irdl.any
    %a = irdl.parametric @mpc::@add<%k>
    irdl.operands(x: %a, y: %a)
    irdl.results(r: %a)
  }

  // CondEval (Section 4, Table 3) in online round `round`: the servers open [E] + r and send the
  // key-decryption message (KeyDec) for their share of `c1`; each evaluates the decrypted gate
  // key of f = [E in interval] (on -E with `negate`): XOR shares of c1 `conj` f(E). The
  // threshold it decides (`num`/`den`, `negative`, `strict`) is recorded for the runtime's check.
  irdl.operation @condeval {
    %nn = irdl.is "non_negative"
    %ng = irdl.is "negative"
    %iv = irdl.any_of(%nn, %ng)
    %and = irdl.is "and"
    %or = irdl.is "or"
    %cj = irdl.any_of(%and, %or)
    %i_neg = irdl.base "#builtin.integer"
    %i_round = irdl.base "#builtin.integer"
    %i_num = irdl.base "#builtin.integer"
    %i_den = irdl.base "#builtin.integer"
    %i_tneg = irdl.base "#builtin.integer"
    %i_strict = irdl.base "#builtin.integer"
    irdl.attributes { "interval" = %iv, "negate" = %i_neg, "conj" = %cj, "round" = %i_round, "num" = %i_num, "den" = %i_den, "negative" = %i_tneg, "strict" = %i_strict }
    %x = irdl.base @mpc::@xor
    %k = irdl.any
    %a = irdl.parametric @mpc::@add<%k>
    irdl.operands(c1: %x, e: %a)
    irdl.results(bit: %x)
  }

  // Each server sends its XOR shares to party `to`, who XORs them (the client's decisions).
  irdl.operation @reveal_xor {
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "to" = %i }
    %x = irdl.base @mpc::@xor
    irdl.operands(bits: %x)
    %c = irdl.base @mpc::@clear_bits
    irdl.results(clear: %c)
  }
}
