fn main() {
    let path = std::env::args().nth(1).unwrap_or_default();
    let bytes = std::fs::read(&path).unwrap_or_default();
    let parsed = decision_core::syntax::parse(&bytes);
    for d in &parsed.diagnostics {
        println!("L{} C{} {} {:?} {}", d.span.line, d.span.column, d.code, d.severity, d.message);
    }
    for b in &parsed.contract.blocks {
        println!(
            "{} {:?} {} q={:?} rules={} frame={}",
            b.id,
            b.kind,
            b.position,
            b.questions.iter().map(|q| (&q.id, q.primitive, q.options.len(), q.span.line)).collect::<Vec<_>>(),
            b.policy.len(),
            b.frame.as_ref().map_or(0, |f| f.fields.len() + f.excluded.len())
        );
    }
    println!(
        "schema={:?} title={:?} gen={}",
        parsed.contract.schema.map(|s| s.value),
        parsed.contract.title,
        parsed.contract.generator.map_or(0, |g| g.len())
    );
}
