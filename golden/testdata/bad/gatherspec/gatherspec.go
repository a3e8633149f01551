// Package gatherspec has a gather whose spec leaves two labels of the gathered operand unnamed (a gather selects one axis and sums over none).
package gatherspec

// Net is the model.
//
//ocannl:model
//ocannl:loss train:
//ocannl:input ids : 8 | index 10
//ocannl:input y : 8 | 4
//ocannl:let e = {table; o=[4]} @@ "k, j -> o; b | => b | o" ids
//ocannl:return ((e - y) *. (e - y)) ++ "...|... => 0"
type Net struct{ ocannlNet }
