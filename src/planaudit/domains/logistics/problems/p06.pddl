;; Three cities, two airplanes, five packages with crossing routes,
;; including one package that only changes location inside its
;; city and one that goes from a location to another city's airport.
(define (problem logistics-p06)
  (:domain logistics)
  (:objects
    city1 city2 city3 - city
    ap1 ap2 ap3 - airport
    l1a l1b l2a l3a l3b - location
    t1 t2 t3 - truck
    a1 a2 - airplane
    p1 p2 p3 p4 p5 - package)
  (:init
    (in-city ap1 city1) (in-city l1a city1) (in-city l1b city1)
    (in-city ap2 city2) (in-city l2a city2)
    (in-city ap3 city3) (in-city l3a city3) (in-city l3b city3)
    (at t1 ap1)
    (at t2 l2a)
    (at t3 l3b)
    (at a1 ap1)
    (at a2 ap3)
    (at p1 l1a)
    (at p2 l1b)
    (at p3 l2a)
    (at p4 l3a)
    (at p5 l3b)
    (= (total-cost) 0))
  (:goal (and
    (at p1 l3a)
    (at p2 l2a)
    (at p3 l1b)
    (at p4 l3b)
    (at p5 ap1)))
  (:metric minimize (total-cost)))
