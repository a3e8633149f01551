package model

// Inits exercises every initializer.
//
//ocannl:model
//ocannl:loss l:
//ocannl:input x : 2 | 3
//ocannl:let h = {k = kaiming; o=[4]} * x + {xa = xavier; o=[4]; i=[4]} * ({n = normal; o=[4]} *. {u; o=[4]})
//ocannl:let s = h + {c = 0.5; o=[4]} + {lit = [1; 2; 3; 4]}
//ocannl:return s ++ "...|... => 0"
type Inits struct{ ocannlInits }
