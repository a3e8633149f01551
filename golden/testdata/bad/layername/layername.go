// Package layername misspells a standard-library layer.
package layername

// Net applies "dence", which is not a layer.
//
//ocannl:model
//ocannl:entry predict:
//ocannl:input x : 8 | 2
//ocannl:return dence[4](x)
type Net struct{ ocannlNet }
