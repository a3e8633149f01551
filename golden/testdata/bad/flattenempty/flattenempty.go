// Package flattenempty flattens a tensor with no output axes: the sum
// over an image's axes leaves nothing for flatten to flatten.
package flattenempty

// Net sums each image before flattening it.
//
//ocannl:model
//ocannl:let fc = linear[10]
//ocannl:entry predict:
//ocannl:input images : 32 | 28, 28
//ocannl:return fc(flatten(images ++ "... | h, w => ... | "))
type Net struct{ ocannlNet }
