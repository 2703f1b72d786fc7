// The `irs` dialect: what the user wrote in a `.irs` program, before any choice of ring or protocol.
//
// Values are secret or public iris-code data; no op says how the parties compute it. One
// `func.func @query` holds the program for one query: the inputs it reads, the comparisons,
// and what it reveals. The `ring-select` pass annotates comparisons, `irs-to-mpc` lowers to `mpc`.
irdl.dialect @irs {
  // A secret-shared gallery of iris codes of L bits each (`C_DB`, `M_DB` in Algorithm 1).
  // (Named `db`: IRDL types and ops share one symbol table, and the op is `irs.gallery`.)
  irdl.type @db {
    %l = irdl.base "#builtin.integer"
    irdl.parameters(bits: %l)
  }
  // One query iris code of L bits (`c`, `m` in Algorithm 1).
  irdl.type @code {
    %l = irdl.base "#builtin.integer"
    irdl.parameters(bits: %l)
  }
  // A batch of codes of L bits: the rotations of one query, in rotation order.
  irdl.type @codes {
    %l = irdl.base "#builtin.integer"
    irdl.parameters(bits: %l)
  }
  // One secret bit per (gallery record, rotation), record-major.
  irdl.type @secret_matrix {}
  // One secret bit per gallery record.
  irdl.type @secret_bits {}
  // One secret bit.
  irdl.type @secret_bit {}

  // Declares the gallery input `name`: `code_bits` bits per code, masks "public" or "secret".
  irdl.operation @gallery {
    %s = irdl.base "#builtin.string"
    %i = irdl.base "#builtin.integer"
    %pub = irdl.is "public"
    %sec = irdl.is "secret"
    %mask = irdl.any_of(%pub, %sec)
    irdl.attributes { "name" = %s, "code_bits" = %i, "mask" = %mask }
    %t = irdl.base @irs::@db
    irdl.results(gallery: %t)
  }

  // Declares the query input `name`, supplied by party `owner` (0, 1 or 2).
  irdl.operation @query {
    %s = irdl.base "#builtin.string"
    %owner = irdl.base "#builtin.integer"
    %i = irdl.base "#builtin.integer"
    %pub = irdl.is "public"
    %sec = irdl.is "secret"
    %mask = irdl.any_of(%pub, %sec)
    irdl.attributes { "name" = %s, "owner" = %owner, "code_bits" = %i, "mask" = %mask }
    %t = irdl.base @irs::@code
    irdl.results(code: %t)
  }

  // rot(q, s) for s = lo..=hi, in that order (the rotations of Section 2: shift by s columns of
  // 4 bits within each of the 16 rows). Masks rotate with their codes.
  irdl.operation @rotate {
    %lo = irdl.base "#builtin.integer"
    %hi = irdl.base "#builtin.integer"
    irdl.attributes { "lo" = %lo, "hi" = %hi }
    // The same code length in and out (one constraint variable binds both).
    %l = irdl.any
    %c = irdl.parametric @irs::@code<%l>
    irdl.operands(code: %c)
    %cs = irdl.parametric @irs::@codes<%l>
    irdl.results(codes: %cs)
  }

  // For every (record d, code c): fhd(c, d) < ratio_num / ratio_den, i.e. hd < ratio * ml with
  // ml = popcount(m_c & m_d), hd = popcount((c ^ d) & m_c & m_d); ml = 0 never matches.
  // This is the test in the loop of Algorithm 1. `ring-select` adds the discardable attributes
  // `ring_bits`, `range_lo`, `range_hi` (Lemma 1); IRDL has no optional attributes, so they are
  // not declared here, and `irs-to-mpc` checks that they are present.
  irdl.operation @fhd_lt {
    %num = irdl.base "#builtin.integer"
    %den = irdl.base "#builtin.integer"
    irdl.attributes { "ratio_num" = %num, "ratio_den" = %den }
    %l = irdl.any
    %cs = irdl.parametric @irs::@codes<%l>
    %g = irdl.parametric @irs::@db<%l>
    irdl.operands(codes: %cs, gallery: %g)
    %m = irdl.base @irs::@secret_matrix
    irdl.results(matches: %m)
  }

  // OR of a match matrix: over "all" entries (one bit: "is this query a duplicate?", the
  // `return true` of Algorithm 1) or over the "rotations" of each record (one bit per record).
  irdl.operation @any {
    %all = irdl.is "all"
    %rot = irdl.is "rotations"
    %over = irdl.any_of(%all, %rot)
    irdl.attributes { "over" = %over }
    %m = irdl.base @irs::@secret_matrix
    irdl.operands(matches: %m)
    %bit = irdl.base @irs::@secret_bit
    %bits = irdl.base @irs::@secret_bits
    %r = irdl.any_of(%bit, %bits)
    irdl.results(result: %r)
  }

  // Reveals a secret value to party `to`: shape "any" is one bit per query, "ids" the ids of
  // the matching records. Nothing else about the value is learnt by any party.
  irdl.operation @reveal {
    %i = irdl.base "#builtin.integer"
    %any = irdl.is "any"
    %ids = irdl.is "ids"
    %shape = irdl.any_of(%any, %ids)
    irdl.attributes { "to" = %i, "shape" = %shape }
    %bit = irdl.base @irs::@secret_bit
    %bits = irdl.base @irs::@secret_bits
    %v = irdl.any_of(%bit, %bits)
    irdl.operands(value: %v)
  }
}
