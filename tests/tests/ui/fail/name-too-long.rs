use mcp_tool::prelude::*;

/// Multiply two numbers.
#[tool(
    name = "multiply_two_numbers_and_return_their_product_as_a_floating_point_number_rounded_to_the_nearest_representable_value_please_and_thank_you"
)]
fn multiply(a: f64, b: f64) -> f64 {
    a * b
}

fn main() {}
