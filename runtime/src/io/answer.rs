//! One answer line of the output party, as a batch run prints it and a serving party returns
//! it to its client.

/// `{"query":0,"id":17,"match":true,"ids":[17]}`: compact, fields in the order given; no `"id"`
/// when the program has no query input.
pub fn render(query: u64, id: Option<u64>, fields: &[(String, String)]) -> String {
    let mut s = format!("{{\"query\":{query}");
    if let Some(id) = id {
        s.push_str(&format!(",\"id\":{id}"));
    }
    for (name, value) in fields {
        s.push(',');
        s.push_str(&serde_json::to_string(name).unwrap_or_else(|_| "\"?\"".into()));
        s.push(':');
        s.push_str(value);
    }
    s.push('}');
    s
}

/// A serving party's kept answer: the query's position in the batch, its record id, and the
/// revealed fields (JSON names and values, in order).
pub type KeptAnswer = (u64, Option<u64>, Vec<(String, String)>);
