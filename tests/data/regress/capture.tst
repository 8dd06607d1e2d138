# Hand-made for the tests of `gammago regress` (not from any engine's suite).
# capture.sgf before move 5: a white and a black string in atari on one liberty, G1: the
# colour to play captures there and saves its own string; 200 playouts, no mercy rule, find it.
loadsgf capture.sgf 5

10 reg_genmove black
#? [G1]

# '*': a known bug; passing it is an unexpected PASS
20 reg_genmove black
#? [g1|A9]*

30 reg_genmove black
#? [!G1]

40 reg_genmove b
#? [!(G1|H1)]*

# a numbered test of another command: skipped
45 go_safe black
#? [0]

# a file that the engine cannot load: the test after it fails with the engine's message
loadsgf missing.sgf 5
50 reg_genmove black
#? [G1]

# the same shape on 7x7, set up by plays: black B1-E1 and white A1 A2-F2 in atari on F1
boardsize 7
clear_board
komi 7.5
play b B1
play b C1
play b D1
play b E1
play b A3
play b B3
play b C3
play b D3
play b E3
play b F3
play b G2
play w A1
play w A2
play w B2
play w C2
play w D2
play w E2
play w F2
60 genmove b
#? [F1]

70 reg_genmove w
#? [F1]
