"""Why answers miss: `python -m benchmarks.diagnose [--ids a,b] [--kinds fact,named] [--all]`.

For each tune-split question of `benchmarks/questions.json` (never the holdout split: it is kept
back from tuning) whose answer fails a metric of `benchmarks.evaluate`, prints the question, the
resolved query, the status, each needed paper's gold fact and pages, whether the fact was in the
retrieved passages at all (a retrieval miss) or only not quoted (a sentence-selection miss, then
with the rank and score parts of the best candidate holding it against the chosen quotes), and the
quotes the answer gave. Uses the evaluation's corpus cache (`.data/eval`), built by a first run of
`benchmarks.evaluate`.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from benchmarks.environment import BASE_DIR, configure, stop_chunk_index
from benchmarks.evaluate import (
    GENERATED_PROJECT,
    NOT_ANSWERABLE,
    Corpus,
    Question,
    corpus_pages,
    fact_quoted_share,
    followup_resolved,
    ingest_corpus,
    ingest_generated,
    load_questions,
    needed_papers_at_evidence,
    read_turn,
    select_split,
)


def _scored(question: str, references: list[Any], analysis: Any) -> list[Any]:
    from chat.extractive import (
        asks_about_funding,
        candidate_sentences,
        candidate_windows,
        cheap_scores,
        embed_candidates,
        fallback_candidates,
        score_candidates,
    )
    from chat.services import sentence_vectors
    from indexing.embeddings import embed_query

    candidates = candidate_sentences(references, acknowledgements=asks_about_funding(analysis.query))
    candidates += candidate_windows(candidates)
    if not candidates:
        candidates = fallback_candidates(references)
    cheap = cheap_scores(candidates, analysis)
    dense = embed_candidates(
        candidates,
        analysis,
        embed_query(analysis.query),
        sentence_vectors.embed,
        cheap=cheap,
        known=sentence_vectors.known,
    )
    return sorted(score_candidates(candidates, analysis, dense, cheap=cheap), key=lambda s: (-s.states, -s.score))


def diagnose_turn(corpus: Corpus, question: Question, *, new_conversation: bool, show_all: bool) -> None:
    from chat.services import (
        _project_papers,
        _retrieve,
        analyse_for_project,
        answer_question,
        clear_chat,
        history_turns,
    )

    project = corpus.project
    if new_conversation:
        clear_chat(project=project)
    papers = _project_papers(project)
    analysis = analyse_for_project(papers, question.text, history_turns(project))
    retrieval = _retrieve(papers, analysis)
    answer = answer_question(project=project, user=project.owner, question=question.text, chat=True)
    turn = read_turn(answer, question.text, corpus.file_of)
    if question.answerable:
        fact = fact_quoted_share(question.needed, turn)
        ok = fact == 1.0 and needed_papers_at_evidence(question.needed, turn)
        if question.kind == "followup":
            ok = followup_resolved(question.needed, turn)
    else:
        ok = turn.refused
    if ok and not show_all:
        return
    print(f"\n=== {question.id} [{question.kind}] {'OK' if ok else 'FAIL'} status={turn.status}")
    print(f"Q: {question.text}")
    if analysis.query != question.text:
        print(f"query: {analysis.query}")
    print(
        f"type={analysis.answer_type} named={[corpus.file_of.get(p, p) for p in analysis.named_paper_ids]} "
        f"comparison={analysis.comparison} broad={analysis.broad} terms={analysis.key_terms}"
    )
    retrieved = [(corpus.file_of.get(r.paper_id, "?"), r.page) for r in retrieval.references]
    print(f"retrieved: {retrieved}")
    scored = _scored(question.text, retrieval.references, analysis) if retrieval.references else []
    for needed in question.needed:
        if needed.fact is None:
            continue
        holding = [r for r in retrieval.references if corpus.file_of.get(r.paper_id) == needed.paper]
        in_passages = [r.page for r in holding if needed.fact.found_in(r.text)]
        where = f"in passages at pages {in_passages}" if in_passages else "NOT in retrieved passages"
        print(f"gold {needed.paper} p{list(needed.pages)} fact={needed.fact.text!r}: {where}")
        for rank, s in enumerate(scored):
            if corpus.file_of.get(s.candidate.paper_id) == needed.paper and needed.fact.found_in(s.candidate.text):
                print(
                    f"  best holder rank {rank}: score={s.score:.3f} lex={s.lexical:.2f} dense={s.dense:.2f} "
                    f"type={s.type_match:.1f} nov={s.novelty:.2f} states={s.states} | {s.candidate.text[:200]}"
                )
                break
    for s in scored[:3]:
        print(
            f"  top: {corpus.file_of.get(s.candidate.paper_id)} p{s.candidate.page} score={s.score:.3f} "
            f"lex={s.lexical:.2f} dense={s.dense:.2f} type={s.type_match:.1f} nov={s.novelty:.2f} states={s.states} "
            f"| {s.candidate.text[:160]}"
        )
    for text, cited in turn.quotes:
        print(f"  quoted {cited}: {text[:220]}")
    if not turn.quotes:
        print(f"  answer: {answer.text[:300]}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", default="", help="comma-separated question ids (default every tune question)")
    parser.add_argument("--kinds", default="", help="comma-separated kinds")
    parser.add_argument("--all", action="store_true", help="also show questions that pass")
    args = parser.parse_args(argv)
    questions = select_split(load_questions(), "tune")
    if args.ids:
        ids = set(args.ids.split(","))
        questions = [q for q in questions if q.id in ids]
    if args.kinds:
        kinds = set(args.kinds.split(","))
        questions = [q for q in questions if q.kind in kinds]
    configure(BASE_DIR / ".data" / "eval")
    try:
        project = ingest_corpus(reindex=False)
        generated, folder = ingest_generated(reindex=False)
        corpora = {}
        from benchmarks.environment import PAPERS_DIR

        for name, proj, source in (("papers", project, PAPERS_DIR), (GENERATED_PROJECT, generated, folder)):
            papers = list(proj.papers.all())
            file_of, pages = corpus_pages(papers, source)
            corpora[name] = Corpus(proj, papers, file_of, pages)
        for question in questions:
            corpus = corpora[question.corpus]
            diagnose_turn(corpus, question, new_conversation=True, show_all=args.all or question.followup is not None)
            if question.followup is not None:
                diagnose_turn(corpus, question.followup, new_conversation=False, show_all=args.all)
            sys.stdout.flush()
    finally:
        stop_chunk_index()
    print(f"\n{len(questions)} questions; answerable kinds exclude {sorted(NOT_ANSWERABLE)}", file=sys.stderr)


if __name__ == "__main__":
    main()
