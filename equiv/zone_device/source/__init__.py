"""The zone-device subject's kernel-source tooling: the model checked against a kernel
tree's own C (``--linux``), a patch proved from its C text (``--linux --patch``,
``--against``) and the model's layout against a built kernel's BTF (``--btf``).  It builds
on the card's model (the top-level modules) and on the readers in :mod:`equiv.linux`.

    cli            the options of ``--linux``, ``--patch``, ``--against``, and what they run
    files          the files of a tree the tooling reads, the configuration's generated
                   headers (headers_for) and how they were made (prepared_notes)
    prepared       the configuration a --linux run proves: the one the tree prepared, the
                   deduplicated vmemmap read from the tree's text
    ctyped         the types of a tree's mm/mm_init.c as clang gives them (sizes, layouts,
                   integer types, conversions, sizeof by position)
    src_layout     struct page / struct folio layout as clang lays them out, against the model
    drift          the drift report: does a tree still do what the model mirrors?
    drift_tables   the effects each hand-written model mirrors, per modelled function
    cstate         the C interpreter's values and state: values, memory layers, frames
    cinterp        the C interpreter: kernel functions run from a tree's text over struct pages
    cdefs          where a name's compiled definition is (files read, a header clang found,
                   another .c file's unit) and the check of a stand-in against it
    standins       the kernel texts (digests, versions) each trusted stand-in was checked against
    csummary       the interpreter's loop summaries and their lemmas
    common         what both source-derived proofs share: the hand models, the lemma check,
                   a tree's run, a page role's query and the decision of a cell's roles
    fidelity       ``--linux``'s proof: a tree's C against the hand-written slow path
    patchproof     ``--patch``'s proof: a patched tree's C against the base tree's
    slow_v612y     the 6.12 stable slow path (6.12.117), written by hand
    layout_check   the model's struct page against a built kernel's BTF (``--btf``)
    present        the reports of ``--linux`` and ``--btf``, as text or JSON
    patch_present  the reports of ``--patch`` / ``--against`` (text, JSON, SARIF, JUnit XML)
                   and the ``--list`` section on what the C interpreter reads
"""
