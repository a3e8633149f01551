package intest_test

/* ocannl:einsum "i => i" */

//ocannl:cuda
