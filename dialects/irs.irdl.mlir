// The `irs` dialect: what the user wrote in a `.irs` program, before any choice of ring, sharing
// or protocol variant (the module carries `irs.parties`).
//
// One `func.func @query` holds the program as it applies to the current query of the batch: the
// inputs it reads, the comparisons, the boolean structure and what it reveals. Secret bits carry
// no shape in their type; their layout (one per query, per record, or per (record, rotation),
// record-major) is fixed by the program and checked by the front end. The `variant-select` and
// `ring-select` passes record their choices on every comparison; `irs-to-mpc` lowers to `mpc`.
irdl.dialect @irs {
  // One iris code of L bits with its mask: the current query's (`c`, `m` of Algorithm 1).
  irdl.type @code {
    %l = irdl.base "#builtin.integer"
    irdl.parameters(bits: %l)
  }
  // Many iris codes of L bits: the records of a gallery (`C_DB`, `M_DB`), the earlier queries
  // of the batch, or the rotations of one query.
  irdl.type @codes {
    %l = irdl.base "#builtin.integer"
    irdl.parameters(bits: %l)
  }
  // One fixed-point embedding of N components (the current query's).
  irdl.type @vector {
    %n = irdl.base "#builtin.integer"
    irdl.parameters(dim: %n)
  }
  // Many embeddings of N components (the records of a gallery).
  irdl.type @vectors {
    %n = irdl.base "#builtin.integer"
    irdl.parameters(dim: %n)
  }
  // Secret bits.
  irdl.type @bits {}

  // The choices the passes record (typed, so the verifier rejects a misspelt one):
  // `#irs.sharing<"rep3">` how iris inputs are secret-shared (one per program: on the module as
  // `irs.sharing`, and on every `irs.fhd_lt`), `#irs.variant<"mpc-lift">` how an fhd comparison
  // is computed (Table 2 of the Large-Scale MPC paper), `#irs.protocol<"rep3">` the protocol
  // family of the whole program (module attribute `irs.protocol`).
  irdl.attribute @sharing {
    %rep3 = irdl.is "rep3"
    %fp = irdl.is "fp"
    %gr2 = irdl.is "gr2"
    %gr4 = irdl.is "gr4"
    %s = irdl.any_of(%rep3, %fp, %gr2, %gr4)
    irdl.parameters(name: %s)
  }
  irdl.attribute @variant {
    %plain = irdl.is "plain-mask"
    %mpc = irdl.is "mpc-lift"
    %const = irdl.is "const-lift"
    %no = irdl.is "no-lift"
    %v = irdl.any_of(%plain, %mpc, %const, %no)
    irdl.parameters(name: %v)
  }
  // `#irs.msb_input<"additive">` what an fhd comparison's MSB starts from: the dot products'
  // additive shares (AdditiveMSB) or replicated shares after a reshare (BitExtract).
  irdl.attribute @msb_input {
    %rep = irdl.is "replicated"
    %add = irdl.is "additive"
    %m = irdl.any_of(%rep, %add)
    irdl.parameters(name: %m)
  }
  irdl.attribute @protocol {
    %rep3 = irdl.is "rep3"
    %beaver = irdl.is "beaver"
    %fss2 = irdl.is "fss2"
    %p = irdl.any_of(%rep3, %beaver, %fss2)
    irdl.parameters(name: %p)
  }
  // A secret integer per query (a count).
  irdl.type @number {}

  // The current query's value of query input number `input` (`name` as declared). `kind` is
  // "iris" (with `mask`), "embedding" (with `scale`) or "bit".
  irdl.operation @query_value {
    %s = irdl.base "#builtin.string"
    %i = irdl.base "#builtin.integer"
    %iris = irdl.is "iris"
    %emb = irdl.is "embedding"
    %bit = irdl.is "bit"
    %kind = irdl.any_of(%iris, %emb, %bit)
    %i_input = irdl.base "#builtin.integer"
    %i_owner = irdl.base "#builtin.integer"
    irdl.attributes { "name" = %s, "input" = %i_input, "kind" = %kind, "owner" = %i_owner }
    %c = irdl.base @irs::@code
    %v = irdl.base @irs::@vector
    %b = irdl.base @irs::@bits
    %r = irdl.any_of(%c, %v, %b)
    irdl.results(value: %r)
  }

  // The records a record binder ranges over, field of input number `input`: `source` "gallery"
  // (a gallery, or one gallery of a zip: the runtime checks that zipped galleries agree on
  // ids) or "earlier" (the queries before the current one: intra-batch uniqueness).
  irdl.operation @records {
    %s = irdl.base "#builtin.string"
    %i = irdl.base "#builtin.integer"
    %g = irdl.is "gallery"
    %e = irdl.is "earlier"
    %src = irdl.any_of(%g, %e)
    irdl.attributes { "name" = %s, "input" = %i, "source" = %src }
    %c = irdl.base @irs::@codes
    %v = irdl.base @irs::@vectors
    %b = irdl.base @irs::@bits
    %r = irdl.any_of(%c, %v, %b)
    irdl.results(records: %r)
  }

  // rot(q, s) for s = lo..=hi, in that order (shift by s columns of 4 bits within each of the 16
  // rows, as the deployed system rotates). Masks rotate with their codes. With the discardable
  // attribute `mirror = 1` (`rotations(mirror(q), ...)`), of the query's mirror image: columns
  // reversed, imaginary code bits (odd k of a cell) flipped, masks mirrored unflipped.
  irdl.operation @rotate {
    %lo = irdl.base "#builtin.integer"
    %hi = irdl.base "#builtin.integer"
    irdl.attributes { "lo" = %lo, "hi" = %hi }
    %l = irdl.any
    %c = irdl.parametric @irs::@code<%l>
    irdl.operands(code: %c)
    %cs = irdl.parametric @irs::@codes<%l>
    irdl.results(codes: %cs)
  }

  // For every (record d, code c), record-major: fhd(c, d) < ratio_num / ratio_den, i.e.
  // hd < ratio * ml with ml = popcount(m_c & m_d), hd = popcount((c ^ d) & m_c & m_d) (the test
  // of Algorithms 1-3). Comparisons are numbered by their order in the function (the order of
  // `irisc explain`). `variant-select` then `ring-select` add the choices as discardable
  // attributes (IRDL has no optional attributes, so they are not declared here; the values are
  // typed: `sharing = #irs.sharing<..>`, `variant = #irs.variant<..>`, rings, `a`, `b` and
  // `lift_bits` as integers, `ring_why` the justification; `irs-to-mpc` checks them).
  irdl.operation @fhd_lt {
    %i = irdl.base "#builtin.integer"
    %pub = irdl.is "public"
    %sec = irdl.is "secret"
    %mask = irdl.any_of(%pub, %sec)
    %i_ratio_num = irdl.base "#builtin.integer"
    %i_ratio_den = irdl.base "#builtin.integer"
    irdl.attributes { "ratio_num" = %i_ratio_num, "ratio_den" = %i_ratio_den, "mask" = %mask }
    %l = irdl.any
    %c = irdl.parametric @irs::@code<%l>
    %cs = irdl.parametric @irs::@codes<%l>
    %q = irdl.any_of(%c, %cs)
    irdl.operands(query: %q, records: %cs)
    %b = irdl.base @irs::@bits
    irdl.results(matches: %b)
  }

  // For every record y: cosine(x, y) >= tau (`strict` = 1: >), tau = (negative ? -1 : 1) *
  // num / den, decided without square roots (paper 002, Section 2.4); components are fixed-point
  // with `scale_bits` fractional bits. `ring-select` adds
  // `ring_bits` and `ring_why`.
  irdl.operation @cosine_ge {
    %i = irdl.base "#builtin.integer"
    %i_num = irdl.base "#builtin.integer"
    %i_den = irdl.base "#builtin.integer"
    %i_negative = irdl.base "#builtin.integer"
    %i_strict = irdl.base "#builtin.integer"
    %i_scale = irdl.base "#builtin.integer"
    irdl.attributes { "num" = %i_num, "den" = %i_den, "negative" = %i_negative, "strict" = %i_strict, "scale_bits" = %i_scale }
    %n = irdl.any
    %v = irdl.parametric @irs::@vector<%n>
    %vs = irdl.parametric @irs::@vectors<%n>
    irdl.operands(query: %v, records: %vs)
    %b = irdl.base @irs::@bits
    irdl.results(matches: %b)
  }

  // A public constant bit.
  irdl.operation @const {
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "value" = %i }
    %b = irdl.base @irs::@bits
    irdl.results(bit: %b)
  }

  // Elementwise logic on secret bits; a one-bit operand is broadcast.
  irdl.operation @not {
    %b = irdl.base @irs::@bits
    irdl.operands(x: %b)
    irdl.results(r: %b)
  }
  irdl.operation @and {
    %b = irdl.base @irs::@bits
    irdl.operands(x: %b, y: %b)
    irdl.results(r: %b)
  }
  irdl.operation @or {
    %b = irdl.base @irs::@bits
    irdl.operands(x: %b, y: %b)
    irdl.results(r: %b)
  }

  // The secret conditional `if cond { then } else { els }`: both branches are computed and
  // the result is selected without revealing `cond`.
  irdl.operation @select {
    %b = irdl.base @irs::@bits
    irdl.operands(cond: %b, then: %b, els: %b)
    irdl.results(r: %b)
  }

  // OR (`any`) / AND (`all`) over consecutive groups of `group` bits (0: all bits, one result).
  irdl.operation @any {
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "group" = %i }
    %b = irdl.base @irs::@bits
    irdl.operands(bits: %b)
    irdl.results(r: %b)
  }
  irdl.operation @all {
    %i = irdl.base "#builtin.integer"
    irdl.attributes { "group" = %i }
    %b = irdl.base @irs::@bits
    irdl.operands(bits: %b)
    irdl.results(r: %b)
  }

  // The number of set bits, in secret.
  irdl.operation @count {
    %b = irdl.base @irs::@bits
    irdl.operands(bits: %b)
    %c = irdl.base @irs::@number
    irdl.results(count: %c)
  }

  // Reveals a value to party `to` under the output field `label`: shape "bit" (one bit per
  // query), "ids" (the ids of the `records` whose bit is set) or "count". Nothing else about the
  // value is learnt by any party.
  irdl.operation @reveal {
    %i = irdl.base "#builtin.integer"
    %s = irdl.base "#builtin.string"
    %bit = irdl.is "bit"
    %ids = irdl.is "ids"
    %cnt = irdl.is "count"
    %shape = irdl.any_of(%bit, %ids, %cnt)
    irdl.attributes { "to" = %i, "shape" = %shape, "label" = %s }
    %b = irdl.base @irs::@bits
    %c = irdl.base @irs::@number
    %v = irdl.any_of(%b, %c)
    %cs = irdl.base @irs::@codes
    %vs = irdl.base @irs::@vectors
    %r = irdl.any_of(%cs, %vs, %b)
    irdl.operands(value: %v, records: variadic %r)
  }
}
