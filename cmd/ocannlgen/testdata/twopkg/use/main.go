// Command use trains the model of package m for a step and predicts.
package main

import (
	"fmt"

	"gentest/m"
)

func main() {
	var x m.MLP
	x.Init(1)
	var in [8][4]float32
	var y [8][3]float32
	fmt.Println(x.TrainStep(&in, &y) >= 0)
	app := &m.App{Name: "demo"}
	app.Init(2)
	fmt.Println(app.Name, len(app.Predict(&in)))
}
