# tests/coll
