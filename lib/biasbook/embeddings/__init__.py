"""Static word vectors (gensim ``KeyedVectors``): loading, training, and an explicit report of the
words a vocabulary lacks."""
