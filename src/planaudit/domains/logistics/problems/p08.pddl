;; Six cities in a ring: the package of each city must reach the
;; non-airport location of the next city (city6 -> city1).  One
;; airplane tours the ring; the truck -> airplane -> truck chain
;; repeats six times (the longest plan of the suite).
(define (problem logistics-p08)
  (:domain logistics)
  (:objects
    city1 city2 city3 city4 city5 city6 - city
    ap1 ap2 ap3 ap4 ap5 ap6 - airport
    l1a l2a l3a l4a l5a l6a - location
    t1 t2 t3 t4 t5 t6 - truck
    a1 - airplane
    p1 p2 p3 p4 p5 p6 - package)
  (:init
    (in-city ap1 city1) (in-city l1a city1)
    (in-city ap2 city2) (in-city l2a city2)
    (in-city ap3 city3) (in-city l3a city3)
    (in-city ap4 city4) (in-city l4a city4)
    (in-city ap5 city5) (in-city l5a city5)
    (in-city ap6 city6) (in-city l6a city6)
    (at t1 ap1)
    (at t2 ap2)
    (at t3 ap3)
    (at t4 ap4)
    (at t5 ap5)
    (at t6 ap6)
    (at a1 ap1)
    (at p1 l1a)
    (at p2 l2a)
    (at p3 l3a)
    (at p4 l4a)
    (at p5 l5a)
    (at p6 l6a)
    (= (total-cost) 0))
  (:goal (and
    (at p1 l2a)
    (at p2 l3a)
    (at p3 l4a)
    (at p4 l5a)
    (at p5 l6a)
    (at p6 l1a)))
  (:metric minimize (total-cost)))
