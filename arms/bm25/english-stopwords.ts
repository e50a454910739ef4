/**
 * NLTK's English stop-word list (`nltk.corpus.stopwords.words('english')`, 179 words), the common choice for
 * the "150+ English stop words" of the v1 hybrid provider's BM25 (docs/adr/0024-reference-recipes.md).
 * Apostrophe forms are stored without the apostrophe, as the `simple` tokenizer splits on it: "don't" reaches the
 * filter as "don" and "t" (the latter dropped by a minimum token length of 2).
 */
export const ENGLISH_V1_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'i me my myself we our ours ourselves you youre youve youll youd your yours yourself yourselves he him his ' +
    'himself she shes her hers herself it its itself they them their theirs themselves what which who whom this ' +
    'that thatll these those am is are was were be been being have has had having do does did doing a an the and ' +
    'but if or because as until while of at by for with about against between into through during before after ' +
    'above below to from up down in out on off over under again further then once here there when where why how ' +
    'all any both each few more most other some such no nor not only own same so than too very s t can will just ' +
    'don dont should shouldve now d ll m o re ve y ain aren arent couldn couldnt didn didnt doesn doesnt hadn ' +
    'hadnt hasn hasnt haven havent isn isnt ma mightn mightnt mustn mustnt needn neednt shan shant shouldn ' +
    'shouldnt wasn wasnt weren werent won wont wouldn wouldnt'
  ).split(' '),
);
