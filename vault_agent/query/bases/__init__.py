"""Obsidian Bases expressions: parsed to an AST and interpreted, never executed as code.

The language of `.base` filters, formulas and summaries (help.obsidian.md "Bases syntax",
"Functions", "Formulas", "Views"), for bases-run (the `.base` format, the view runner and
`vault_base`). Read-only; imports only the kernel. docs/bases.md lists what is supported.

The API, one module each:

- `expr_parse.parse_expression(text) -> Expr` (raises `ExpressionSyntaxError` with the
  position and what was expected). `expr_ast` holds the node types (`Binary`, `Call`,
  `MethodCall`, `Member`, `Ident`, …), each with its `pos` (offset, line, column in the
  expression); `expr_print.to_source(expr)` prints one back.
- `support.check_supported(expr)`: static; raises `Unsupported` naming the construct and
  its position (a function, a method, a `file.` field we do not evaluate) before any row is
  read. `support.formula_refs(expr)` lists the formulas an expression reads.
- `interpret.evaluate(expr, scope, budget=None, variables=None) -> Value` for one row;
  `scope` is a `scope.Scope` bases-run implements per row (the row's `FileInfo`, `this`,
  the clock, the link resolver, `file_info(path)`, backlinks, and `formula(name, budget)`).
  `variables` binds extra names (a summary's `values`). `values.truthy(v)` decides a filter.
- `formulas.FormulaSet.parse({name: text})` and `formulas.RowFormulas` (per row: each formula
  once, cycles refused statically and at run time, nested formulas on the caller's budget).
- `budget.Budget(limits)`: the bound of one evaluation (pass one per row to share it).
- `shapes.simple_filter(expr)` recognises `file.hasTag("x")`, `file.inFolder("x")`,
  `status == "done"`, `rating > 3` (and `!` of them) for vault_query's plan;
  `shapes.property_id("note.x")` reads the property ids of `order`/`sort`/`groupBy`.
- Errors (`expr_errors`): all are `InvalidQuery` (INVALID_QUERY) with `.reason` and
  `.position`; `err.located("formulas.ppu", line, column)` re-anchors one in the file.

Example:

    expr = parse_expression('file.hasTag("book") && rating > 3')
    check_supported(expr)
    for row in rows:                       # scope: bases-run's Scope for the row
        if truthy(evaluate(expr, scope_of(row), budget=Budget())):
            ...

`values` documents the value types, truth and text; `interpret` the operators; `compare`
equality and order; `dates` dates and durations; the `functions_*` modules each family of
functions, with the choices made where the docs are silent.
"""
