# Hand-made for the tests of `gammago regress`: every form of a .tst line, parsed only.
boardsize 9
komi 6.5   # a comment after a command
loadsgf capture.sgf 5

1 reg_genmove black
#? [C3|D4]

2 reg_genmove white
#? [!B2]

3 reg_genmove b
#? [C3]*

4 reg_genmove w
#? [PASS]

5 genmove b
#? [ ! (A1|B1) ]

6 go_safe static
#? [0]

7 sg_compare_float 0.5 uct_value
#? [-1]

$$ this line is not GTP
8
#? [A1]
9 reg_genmove b
#? [C3(]
10 reg_genmove b
#? [A1]
#? [B1]
11 reg_genmove b
