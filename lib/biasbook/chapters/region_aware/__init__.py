"""Region-aware gender-bias topics and metrics (Borah, Garimella & Mihalcea 2024).

- :mod:`.sources`: the region-labelled sources, read and cleaned (UN General Debate sentences and
  city tweets stand in for GeoWAC; GeoWAC itself on the ``paper`` profile); :mod:`.corpora`:
  their Table 5 volumes and the sampled documents of each region.
- :mod:`.weat_across_regions`: Sec. 3 and Appendix C, the ten Caliskan WEAT tests on word2vec
  vectors trained per region (Tables 1 and 7).
- :mod:`.topic_pair_weat`: Sec. 5, WEAT on region-aware topic pairs with region-specific names, on
  fastText vectors per evaluation domain and region (Table 4).
- :mod:`.iat`: Sec. 4.3's IAT protocol as a small text test a reader can take.
- :mod:`.figures`: the pipeline diagram and effect-size heat maps.
- :mod:`.topics`, :mod:`.personas`: Secs. 4.1-4.2 and 6 (BERTopic topics, topic pairs, personas);
  :mod:`.topic_measures`: each topic's gender alignment and coherence.
- :mod:`.uncertainty` (with :mod:`.uncertainty_topics`, :mod:`.uncertainty_pairs`,
  :mod:`.uncertainty_personas`): 95% intervals over what each number averages over (target
  words, documents, topic words, pairs, topics) and the region tests with Holm's correction.
"""
