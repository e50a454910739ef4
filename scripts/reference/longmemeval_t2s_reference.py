#!/usr/bin/env python3
"""Official reference for LongMemEval's turn-to-session numbers (harness measures Success-T2S@k, R-all-T2S@k,
nDCG-LME-T2S@k; evalset/adapters/longmemeval-metrics.ts).

Runs xiaowu0162/LongMemEval's own code, unmodified, on the 2-question sample: `evaluate_retrieval_turn2session`
and `evaluate_retrieval` from src/retrieval/eval_utils.py, and the corpus ids that `process_item_flat_index`
(src/retrieval/run_retrieval.py, taken out of the file by name with `ast`, because the file imports torch and
friends at the top) builds in turn mode: user turns only, `answer` renamed `noans` in the id of a turn of an
answer session without `has_answer`. Each named ranking of the testdata file (our doc ids, best first) becomes the
official `rankings` list of corpus indices; a shorter ranking is passed as it is (Python slices it). k = 1, 3, 5,
10, 30, 50 as run_retrieval.py scores them. The `oracle` ranking is checked against the official oracle retriever.

One shim: numpy 2 removed `np.asfarray`, which their `dcg` calls; it is restored as `np.asarray(x, dtype=float)`,
what it did for a list.

    git -C <LongMemEval checkout or mirror> show HEAD:src/retrieval/eval_utils.py > /tmp/eval_utils.py
    git -C <LongMemEval checkout or mirror> show HEAD:src/retrieval/run_retrieval.py > /tmp/run_retrieval.py
    python3 scripts/reference/longmemeval_t2s_reference.py /tmp/eval_utils.py /tmp/run_retrieval.py \
        ../shared/data/longmemeval/longmemeval_sample.json evalset/adapters/testdata/longmemeval-t2s-reference.json
    npx biome format --write evalset/adapters/testdata/longmemeval-t2s-reference.json   # the repository's JSON layout
"""
import ast
import json
import sys

import numpy as np

KS = [1, 3, 5, 10, 30, 50]


def official_namespace(eval_utils_file, run_retrieval_file):
    if not hasattr(np, 'asfarray'):
        np.asfarray = lambda a: np.asarray(a, dtype=np.float64)
    ns = {'np': np, '__name__': 'eval_utils'}
    exec(compile(open(eval_utils_file).read(), eval_utils_file, 'exec'), ns)
    tree = ast.parse(open(run_retrieval_file).read())
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == 'process_item_flat_index')
    exec(compile(ast.Module(body=[fn], type_ignores=[]), run_retrieval_file, 'exec'), ns)
    return ns


def corpus_of(ns, entry):
    """The question's corpus ids as run_retrieval.py builds them, and ours (`<session_id>_<j>`) at the same indices."""
    corpus_ids, ours = [], []
    for sid, session, ts in zip(entry['haystack_session_ids'], entry['haystack_sessions'], entry['haystack_dates']):
        _, ids, _ = ns['process_item_flat_index'](session, 'turn', sid, ts)
        corpus_ids += ids
        ours += [f'{sid}_{j + 1}' for j, t in enumerate(session) if t['role'] == 'user']
    for a, b in zip(corpus_ids, ours):
        assert a == b or a == b.replace('answer', 'noans'), (a, b)
    return corpus_ids, ours


def main(eval_utils_file, run_retrieval_file, sample_file, testdata_file):
    ns = official_namespace(eval_utils_file, run_retrieval_file)
    entry = next(e for e in json.load(open(sample_file)) if e['question_id'] == '6a1eabeb')
    corpus_ids, ours = corpus_of(ns, entry)
    correct_docs = list(set([doc_id for doc_id in corpus_ids if 'answer' in doc_id]))  # as run_retrieval.py
    data = json.load(open(testdata_file))
    oracle = [i for i, c in enumerate(corpus_ids) if c in correct_docs] + [i for i, c in enumerate(corpus_ids) if c not in correct_docs]
    assert [ours[i] for i in oracle] == data['rankings']['oracle'], 'the oracle ranking is not the official oracle retriever'
    official = {}
    for name, ranking in data['rankings'].items():
        rankings = [ours.index(d) for d in ranking]
        out = {'session': {}, 'turn': {}}
        for k in KS:
            out['session'][str(k)] = [float(x) for x in ns['evaluate_retrieval_turn2session'](rankings, correct_docs, corpus_ids, k=k)]
            out['turn'][str(k)] = [float(x) for x in ns['evaluate_retrieval'](rankings, correct_docs, corpus_ids, k=k)]
        official[name] = out
    data['official'] = {
        'note': 'per k: [recall_any, recall_all, ndcg_any]; session = evaluate_retrieval_turn2session, turn = evaluate_retrieval',
        'corpusIds': corpus_ids,
        'numpy': np.__version__,
        'python': sys.version.split()[0],
        'rankings': official,
    }
    with open(testdata_file, 'w') as f:
        json.dump(data, f, indent=2)
        f.write('\n')


if __name__ == '__main__':
    main(*sys.argv[1:5])
